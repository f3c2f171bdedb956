package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationLagShowsStuckConsumer: a handler that takes one message,
// marks it and then stops reading is stuck; the lag gauge must show its
// partition falling behind while a producer runs, although nothing is
// committed any more (the gauge is refreshed from the high-water mark).
func TestIntegrationLagShowsStuckConsumer(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produce(t, topic, 10)
	group := testenv.UniqueName("lag-g")
	cfg := testConfig()
	cfg.Metrics.LagInterval = 200 * time.Millisecond
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &stuckHandler{marked: make(chan struct{})}
	stop := runConsumeLoop(t, "stuck", g, []string{topic}, h)
	defer stop()

	name := fmt.Sprintf("zkgroup-lag/%s/%s/0", group, topic)
	lag := func() int64 {
		if g, ok := reg.Get(name).(metrics.Gauge); ok {
			return g.Value()
		}
		return -1
	}
	select {
	case <-h.marked:
	case <-time.After(30 * time.Second):
		t.Fatal("no message delivered")
	}
	waitFor(t, 10*time.Second, "the first commit's lag (9)", func() bool { return lag() == 9 })

	produce(t, topic, 20) // the handler reads none of them
	// Within one interval, with room for a slow broker.
	deadline := time.Now().Add(10 * cfg.Metrics.LagInterval)
	for lag() < 29 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := lag(); got != 29 {
		t.Fatalf("lag gauge %s = %d after 20 more messages with a stuck handler, want 29", name, got)
	}
}

// stuckHandler marks the first message of its claim, then reads nothing
// more until the claim ends.
type stuckHandler struct {
	once   sync.Once
	marked chan struct{}
}

func (h *stuckHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *stuckHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *stuckHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	select {
	case m, ok := <-c.Messages():
		if !ok {
			return nil
		}
		s.MarkMessage(m, "")
		h.once.Do(func() { close(h.marked) })
	case <-s.Context().Done():
		return nil
	}
	<-s.Context().Done()
	return nil
}

// TestIntegrationLagRefreshRequestRate counts the ListOffsets requests
// (API key 2) of the lag refresh: one per leader per interval, however
// many partitions a member owns there (the stack has one broker), and
// none from a member that owns nothing. Two members share a topic of 4
// partitions; a third waits for a topic that does not exist.
func TestIntegrationLagRefreshRequestRate(t *testing.T) {
	testenv.Integration(t)
	const interval = 500 * time.Millisecond
	const window = 5 * time.Second
	type member struct {
		cg    *consumergroup.ConsumerGroup
		meter metrics.Meter
	}
	var members []member
	start := func(group, topic string) {
		cfg := testConfig()
		cfg.Metrics.LagInterval = interval
		cfg.Assignment.Strategy = consumergroup.StrategyRangeByID
		cfg.MetricRegistry = metrics.NewRegistry()
		cg := join(t, group, []string{topic}, cfg)
		done := consume(t, len(members), cg, newLedger())
		t.Cleanup(func() { closeGroup(t, cg); <-done })
		members = append(members, member{cg, metrics.GetOrRegisterMeter("protocol-requests-rate-2", cfg.MetricRegistry)})
	}
	owned := func(i int) int { return len(members[i].cg.State().Partitions) }
	four := newTopic(t, 4)
	produce(t, four, 40)
	busy := testenv.UniqueName("lag-rate-g")
	start(busy, four)
	start(busy, four)
	start(testenv.UniqueName("lag-idle-g"), testenv.UniqueName("missing"))
	waitFor(t, 30*time.Second, "2 claims each in the busy group", func() bool { return owned(0) == 2 && owned(1) == 2 })
	time.Sleep(time.Second) // past the claims' own ListOffsets (their start offsets)
	before := make([]int64, len(members))
	for i, m := range members {
		before[i] = m.meter.Count()
	}
	time.Sleep(window)
	for i, m := range members {
		n, parts := m.meter.Count()-before[i], owned(i)
		t.Logf("member %d: %d ListOffsets requests in %v for %d partitions, every %v", i, n, window, parts, interval)
		want := int64(window / interval)
		if parts == 0 {
			want = 0
		}
		if n < want-2 || n > want+1 {
			t.Errorf("member %d (%d partitions): %d ListOffsets requests in %v, want %d (one per interval for its one leader, none without partitions)", i, parts, n, window, want)
		}
	}
}
