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

// latencyStack is a two-partition topic on the stack, the group's two
// fetchers over it, and a producer; MaxWaitTime 2 s, MaxProcessingTime
// 1 s. Everything ends with the test.
type latencyStack struct {
	topic      string
	conf       *sarama.Config
	busy, idle *roundFetcher
	producer   sarama.SyncProducer
	ctx        context.Context
	cancel     context.CancelFunc
	budget     *feedBudget
}

func newLatencyStack(t *testing.T, name string) *latencyStack {
	testenv.Integration(t)
	s := &latencyStack{topic: testenv.UniqueName(name), conf: sarama.NewConfig(), budget: newFeedBudget(1 << 26)}
	testenv.CreateTopic(t, s.topic, 2)
	s.conf.Version = sarama.V2_8_0_0
	s.conf.Consumer.MaxWaitTime = 2 * time.Second
	s.conf.Consumer.MaxProcessingTime = time.Second
	var client sarama.Client
	client, s.producer = stackClient(t, s.conf)
	cfg := &Config{Config: s.conf}
	cfg.Batches = true
	s.busy, s.idle = newFetchers(&env{config: cfg, client: client, log: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.busy.closeConns(); s.idle.closeConns() })
	s.ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(s.cancel)
	return s
}

// feed starts partition p's feed at 0, telling the idle fetcher when it is
// not back soon, as a partition's feedSource has it do.
func (s *latencyStack) feed(t *testing.T, p int32) *batchFeed {
	f := startBatchFeed(s.ctx, feedFetch(s.busy, s.idle, s.topic, p, func() {}), nil, nil, s.conf.Consumer.Fetch.Default, 0, s.budget, 0,
		func() { s.idle.notBackSoon(s.topic, p) })
	t.Cleanup(func() { _ = f.stop() })
	return f
}

// produce sends n messages to partition p, one every 20 ms, each stamped
// with its send time, until n are sent or the test ends.
func (s *latencyStack) produce(t *testing.T, p int32, n int) {
	var producing sync.WaitGroup
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); producing.Wait() })
	producing.Add(1)
	go func() {
		defer producing.Done()
		for range n {
			v := strconv.FormatInt(time.Now().UnixNano(), 10)
			if _, _, err := s.producer.SendMessage(&sarama.ProducerMessage{Topic: s.topic, Partition: p, Value: sarama.StringEncoder(v)}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
}

// latencies reads n messages from feed at once, and returns how long
// after its send each was read, sorted.
func latencies(t *testing.T, feed *batchFeed, n int) []time.Duration {
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
	return lat
}

// A partition with a message every 20 ms, caught up, on a broker where
// another partition of the group is idle (its feed long-polls): each of
// its fetches after a batch must not wait for the idle partition's long
// poll (Consumer.MaxWaitTime, 2 s here). Without the wait for returning
// partitions the next long poll went out with the idle partition alone,
// and the busy one's next fetch queued behind it: p50 1.2 s, p99 2 s.
func TestIntegrationCaughtUpPartitionNotBehindAnIdleLongPoll(t *testing.T) {
	s := newLatencyStack(t, "long-poll-return")
	s.feed(t, 1) // idle
	feed := s.feed(t, 0)
	time.Sleep(500 * time.Millisecond) // both feeds at their log ends
	const n = 150
	s.produce(t, 0, n)
	lat := latencies(t, feed, n)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("delivery latency: p50 %v, p99 %v", p50.Round(time.Millisecond), p99.Round(time.Millisecond))
	if p50 > 200*time.Millisecond {
		t.Errorf("p50 delivery latency %v: the partition's long polls queued behind the idle partition's %v long poll on the same broker",
			p50.Round(time.Millisecond), s.conf.Consumer.MaxWaitTime)
	}
}

// Two caught-up partitions on one broker, a message every 20 ms each: t/0
// read at once, t/1 by a slow reader (a second a batch). t/0's delivery
// latency must not grow by t/1's reader: a feed whose batch its reader
// does not take at once tells the idle fetcher not to wait for it. Without
// that, every long poll that fed t/1 held the next one until t/1's reader
// took the batch, up to Consumer.MaxProcessingTime (a second here): t/0's
// p90 0.9 s.
func TestIntegrationFastPartitionNotHeldBySlowReader(t *testing.T) {
	s := newLatencyStack(t, "long-poll-slow-reader")
	slow := s.feed(t, 1)
	feed := s.feed(t, 0)
	time.Sleep(500 * time.Millisecond)
	var reading sync.WaitGroup
	reading.Add(1)
	t.Cleanup(func() { s.cancel(); reading.Wait() })
	go func() {
		defer reading.Done()
		for {
			select {
			case b := <-slow.batches:
				slow.taken(b)
				select {
				case <-time.After(time.Second):
				case <-s.ctx.Done():
					return
				}
				slow.handedOut()
			case <-s.ctx.Done():
				return
			}
		}
	}()
	const n = 150
	s.produce(t, 0, n+50)
	s.produce(t, 1, n+50)
	lat := latencies(t, feed, n)
	p50, p90, p99 := lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100]
	t.Logf("t/0 delivery latency: p50 %v, p90 %v, p99 %v", p50.Round(time.Millisecond), p90.Round(time.Millisecond), p99.Round(time.Millisecond))
	if p90 > 200*time.Millisecond {
		t.Errorf("t/0 p90 latency %v: held by t/1's slow reader", p90.Round(time.Millisecond))
	}
}
