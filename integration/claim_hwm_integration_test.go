package integration

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// hwmHandler records its claim's HighWaterMarkOffset() when ConsumeClaim
// starts, and again after reading want messages and then a second of
// nothing more.
type hwmHandler struct {
	want          int
	atStart, idle chan int64
}

func (h *hwmHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *hwmHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *hwmHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	h.atStart <- c.HighWaterMarkOffset()
	for range h.want {
		m, ok := <-c.Messages()
		if !ok {
			return nil
		}
		s.MarkMessage(m, "")
	}
	time.Sleep(time.Second)
	h.idle <- c.HighWaterMarkOffset()
	<-s.Context().Done()
	return nil
}

// TestIntegrationClaimHighWaterMark: sarama's claim keeps the partition's
// high-water mark while the partition is idle, so a handler reporting lag
// while idle reads the log end. So must ours, with Fetch.Batches on or
// off: the feed's long polls carry the mark (as first built, only batches
// with messages passed it on, and a caught-up partition read 0). Second
// session: the group's offset is at the log end (10). The mark at the
// start of ConsumeClaim is logged, not checked: the first fetch may not be
// answered yet (with either setting).
func TestIntegrationClaimHighWaterMark(t *testing.T) {
	testenv.Integration(t)
	for _, batches := range []bool{false, true} {
		name := "sarama"
		if batches {
			name = "batches"
		}
		t.Run(name, func(t *testing.T) {
			topic := newTopic(t, 1)
			produce(t, topic, 10)
			group := testenv.UniqueName("claim-hwm")
			for session, want := range []int{10, 0} {
				cfg := testConfig()
				cfg.Fetch.Batches = batches
				g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				h := &hwmHandler{want: want, atStart: make(chan int64, 1), idle: make(chan int64, 1)}
				ctx, cancel := context.WithCancel(context.Background())
				consumed := make(chan error, 1)
				go func() { consumed <- g.Consume(ctx, []string{topic}, h) }()
				var atStart, idle int64 = -1, -1
				select {
				case atStart = <-h.atStart:
				case <-time.After(30 * time.Second):
				}
				select {
				case idle = <-h.idle:
				case <-time.After(30 * time.Second):
				}
				cancel()
				<-consumed
				_ = g.Close()
				t.Logf("session %d: HighWaterMarkOffset() %d at the start of ConsumeClaim, %d while idle", session, atStart, idle)
				if idle != 10 {
					t.Errorf("session %d: HighWaterMarkOffset() %d while idle after the log end 10, want 10", session, idle)
				}
			}
		})
	}
}
