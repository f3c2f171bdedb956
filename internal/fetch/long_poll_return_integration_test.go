package fetch

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// A partition with a message every 20 ms, caught up, on a broker where
// another partition of the group is idle (its feed long-polls): each of
// its fetches after a batch must not wait for the idle partition's long
// poll (Consumer.MaxWaitTime, 2 s here). Without the wait for returning
// partitions the next long poll went out with the idle partition alone,
// and the busy one's next fetch queued behind it: p50 1.2 s, p99 2 s.
func TestIntegrationCaughtUpPartitionNotBehindAnIdleLongPoll(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("long-poll-return")
	testenv.CreateTopic(t, topic, 2)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.Consumer.MaxWaitTime = 2 * time.Second
	client, producer := stackClient(t, conf)
	cfg := &Config{Config: conf}
	cfg.Batches = true
	cg := &env{config: cfg, client: client, log: slog.New(slog.DiscardHandler)}
	busy, idle := newFetchers(cg)
	defer busy.closeConns()
	defer idle.closeConns()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	budget := newFeedBudget(1 << 26)
	idleFeed := newBatchFeed(ctx, feedFetch(busy, idle, topic, 1), nil, nil, conf.Consumer.Fetch.Default, 0, budget, 0)
	defer func() { _ = idleFeed.stop() }()
	feed := newBatchFeed(ctx, feedFetch(busy, idle, topic, 0), nil, nil, conf.Consumer.Fetch.Default, 0, budget, 0)
	defer func() { _ = feed.stop() }()
	time.Sleep(500 * time.Millisecond) // both feeds at their log ends

	const n = 150
	go func() {
		for range n {
			v := strconv.FormatInt(time.Now().UnixNano(), 10)
			if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var lat []time.Duration
	deadline := time.After(30 * time.Second)
	for len(lat) < n {
		select {
		case b := <-feed.batches:
			if b.err != nil {
				t.Fatal(b.err)
			}
			feed.taken(b)
			b.parse()
			for _, m := range b.msgs {
				ns, _ := strconv.ParseInt(string(m.Value), 10, 64)
				lat = append(lat, time.Since(time.Unix(0, ns)))
			}
			feed.handedOut()
		case <-deadline:
			t.Fatalf("%d of %d messages in 30 s", len(lat), n)
		}
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("delivery latency: p50 %v, p99 %v", p50.Round(time.Millisecond), p99.Round(time.Millisecond))
	if p50 > 200*time.Millisecond {
		t.Errorf("p50 delivery latency %v: the partition's long polls queued behind the idle partition's %v long poll on the same broker", p50.Round(time.Millisecond), conf.Consumer.MaxWaitTime)
	}
}
