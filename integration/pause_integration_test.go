package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// markingCounter marks every message and counts them.
type markingCounter struct{ n atomic.Int64 }

func (h *markingCounter) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *markingCounter) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *markingCounter) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.n.Add(1)
		s.MarkMessage(m, "")
	}
	return nil
}

// TestIntegrationPauseStopsDelivery: messages produced after PauseAll are
// not delivered until ResumeAll, then all of them are, on every fetch
// path: the group's own batch fetches (the default), sarama's partition
// consumer (Fetch.Batches false), and sarama's consumer chosen because the
// batch fetch does not apply (read_committed). Pause, Resume and the
// partition-list forms behave the same way.
func TestIntegrationPauseStopsDelivery(t *testing.T) {
	testenv.Integration(t)
	cases := []struct {
		name   string
		config func(*consumergroup.Config)
		all    bool // PauseAll/ResumeAll, else Pause/Resume with the partition list
	}{
		{"batches", func(*consumergroup.Config) {}, true},
		{"batches by partition", func(*consumergroup.Config) {}, false},
		{"unbatched", func(c *consumergroup.Config) { c.Fetch.Batches = false }, true},
		{"sarama read committed", func(c *consumergroup.Config) { c.Consumer.IsolationLevel = sarama.ReadCommitted }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := newTopic(t, 2)
			produce(t, topic, 20)
			cfg := testConfig()
			c.config(cfg)
			g, err := consumergroup.NewConsumerGroup(testenv.UniqueName("pause"), []string{testenv.ZKAddr()}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := &markingCounter{}
			ctx, cancel := context.WithCancel(context.Background())
			consumed := make(chan error, 1)
			go func() { consumed <- g.Consume(ctx, []string{topic}, h) }()
			defer func() {
				cancel()
				<-consumed
				_ = g.Close()
			}()
			waitFor(t, 30*time.Second, "the first 20 messages", func() bool { return h.n.Load() >= 20 })
			time.Sleep(200 * time.Millisecond) // the idle partitions' next long polls are out

			parts := map[string][]int32{topic: {0, 1}}
			if c.all {
				g.PauseAll()
			} else {
				g.Pause(parts)
			}
			produce(t, topic, 50)
			time.Sleep(2 * time.Second)
			if n := h.n.Load() - 20; n != 0 {
				t.Errorf("%d of 50 messages produced after the pause were delivered while paused", n)
			}
			if c.all {
				g.ResumeAll()
			} else {
				g.Resume(parts)
			}
			waitFor(t, 30*time.Second, "the 50 messages produced while paused, after the resume", func() bool { return h.n.Load() >= 70 })
		})
	}
}
