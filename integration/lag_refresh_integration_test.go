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
