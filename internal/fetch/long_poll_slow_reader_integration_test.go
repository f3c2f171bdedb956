package fetch

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Two caught-up partitions on one broker, a message every 20 ms each: t/0
// read at once, t/1 by a slow reader (a second a batch). t/0's delivery
// latency must not grow by t/1's reader: a feed whose batch its reader
// does not take at once tells the idle fetcher not to wait for it. Without
// that, every long poll that fed t/1 held the next one until t/1's reader
// took the batch, up to Consumer.MaxProcessingTime (a second here).
func TestIntegrationFastPartitionNotHeldBySlowReader(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("long-poll-slow-reader")
	testenv.CreateTopic(t, topic, 2)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.Consumer.MaxWaitTime = 2 * time.Second
	conf.Consumer.MaxProcessingTime = time.Second
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
	// Each feed tells the idle fetcher when it is not back soon, as a
	// partition's feedSource has it do.
	feedOf := func(p int32) *batchFeed {
		return startBatchFeed(ctx, feedFetch(busy, idle, topic, p), nil, nil, conf.Consumer.Fetch.Default, 0, budget, 0,
			func() { idle.notBackSoon(topic, p) })
	}
	slow := feedOf(1)
	defer func() { _ = slow.stop() }()
	feed := feedOf(0)
	defer func() { _ = feed.stop() }()
	time.Sleep(500 * time.Millisecond)
	var reading sync.WaitGroup
	reading.Add(1)
	defer func() { cancel(); reading.Wait() }()
	go func() {
		defer reading.Done()
		for {
			select {
			case b := <-slow.batches:
				slow.taken(b)
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return
				}
				slow.handedOut()
			case <-ctx.Done():
				return
			}
		}
	}()
	const n = 150
	var producing sync.WaitGroup
	defer producing.Wait()
	stopProducing := make(chan struct{})
	defer close(stopProducing)
	for _, p := range []int32{0, 1} {
		producing.Add(1)
		go func() {
			defer producing.Done()
			for range n + 50 {
				select {
				case <-stopProducing:
					return
				default:
				}
				v := strconv.FormatInt(time.Now().UnixNano(), 10)
				if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.StringEncoder(v)}); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
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
	p50, p90, p99 := lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100]
	t.Logf("t/0 delivery latency: p50 %v, p90 %v, p99 %v", p50.Round(time.Millisecond), p90.Round(time.Millisecond), p99.Round(time.Millisecond))
	if p90 > 200*time.Millisecond {
		t.Errorf("t/0 p90 latency %v: held by t/1's slow reader", p90.Round(time.Millisecond))
	}
}
