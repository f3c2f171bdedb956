package fetch

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

// sarama registers a connection's per-broker meters
// (incoming-byte-rate-for-broker-<id>, request-rate-for-broker-<id>, ...)
// only for a Broker with an id: the fetchers' own connections were opened
// with sarama.NewBroker (id -1), so the traffic of the batch feed, most of
// a consumer's, showed in no per-broker metric. The meters themselves are
// not registered here (the tests run with metrics.UseNilMetrics), so the
// check is the id they are registered under.
func TestOwnConnectionCarriesLeaderID(t *testing.T) {
	broker := sarama.NewMockBroker(t, 3)
	defer broker.Close()
	mockFetchLeader(t, broker)
	f := newRoundFetcher(mockFetchGroup(t, broker))
	f.own = newOwnConns(f.env)
	defer f.closeConns()
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	f.own.mu.Lock()
	defer f.own.mu.Unlock()
	c := f.own.conns[3]
	if c == nil {
		t.Fatal("no own connection to broker 3")
	}
	if conn := c.broker; conn.ID() != 3 {
		t.Fatalf("own connection to broker 3 has id %d: sarama registers its per-broker metrics only under the broker's id", conn.ID())
	}
}

// countingHistogram counts its updates and their sum (go-metrics'
// histograms are nil ones under metrics.UseNilMetrics).
type countingHistogram struct {
	metrics.NilHistogram
	n, sum atomic.Int64
}

func (h *countingHistogram) Update(v int64) { h.n.Add(1); h.sum.Add(v) }

// sarama's partition consumer updates consumer-batch-size with the
// records of every partition's answer; the batch feed, which reads most
// partitions, updated it never.
func TestFeedUpdatesConsumerBatchSize(t *testing.T) {
	reg := metrics.NewRegistry()
	h := &countingHistogram{}
	if err := reg.Register("consumer-batch-size", h); err != nil {
		t.Fatal(err)
	}
	conf := sarama.NewConfig()
	conf.MetricRegistry = reg
	e := NewEngine(Config{Config: conf}, Deps{})
	t.Cleanup(e.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mark atomic.Int64
	p := e.Partition(ctx, "t", 0, &mark, nil)
	feed := newBatchFeed(p.ctx, backlogFetch, nil, &mark, 1000, 0, newFeedBudget(1<<20), 0)
	src := &feedSource{p: p, feed: feed}
	defer src.Close()
	next(t, src, 0)
	next(t, src, 1)
	next(t, src, 2)
	if n, sum := h.n.Load(), h.sum.Load(); n != 1 || sum != 3 {
		t.Fatalf("consumer-batch-size: %d updates summing %d after one batch of 3 went out, want 1 of 3", n, sum)
	}
}

// countingMeter counts what is marked on it.
type countingMeter struct {
	metrics.NilMeter
	n atomic.Int64
}

func (m *countingMeter) Mark(n int64) { m.n.Add(n) }

// The own connections' rounds, written and read by the fetchers
// themselves rather than by sarama's Broker, still count in sarama's
// per-broker meters, as they did when sarama sent them.
func TestOwnConnectionFetchCountsInBrokerMeters(t *testing.T) {
	broker := sarama.NewMockBroker(t, 3)
	defer broker.Close()
	mockFetchLeader(t, broker)
	e := mockFetchGroup(t, broker)
	reg := metrics.NewRegistry()
	meters := map[string]*countingMeter{}
	for _, name := range []string{"consumer-fetch-rate-for-broker-3", "incoming-byte-rate-for-broker-3", "request-rate-for-broker-3"} {
		meters[name] = &countingMeter{}
		if err := reg.Register(name, meters[name]); err != nil {
			t.Fatal(err)
		}
	}
	e.config.MetricRegistry = reg
	f := newRoundFetcher(e)
	f.own = newOwnConns(f.env)
	defer f.closeConns()
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	for name, m := range meters {
		if m.n.Load() == 0 {
			t.Errorf("%s: nothing counted after a fetch over the own connection", name)
		}
	}
}
