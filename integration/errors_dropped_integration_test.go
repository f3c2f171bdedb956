package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationErrorsDroppedCounted: errors that find Errors() full,
// because nobody reads it, are counted in zkgroup-errors-dropped. Each
// session here ends with its handler's error; Errors() holds one.
func TestIntegrationErrorsDroppedCounted(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produce(t, topic, 3)
	group := testenv.UniqueName("drop-g")
	cfg := testConfig()
	cfg.ChannelBufferSize = 1
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const sessions = 3
	for range sessions {
		if err := g.Consume(context.Background(), []string{topic}, failingHandler{}); err != nil {
			t.Fatalf("consume: %v", err)
		}
	}
	dropped := groupMetric(reg, group, "zkgroup-errors-dropped").(metrics.Counter).Count()
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	kept := 0
	for range g.Errors() {
		kept++
	}
	if kept != 1 || dropped < sessions-1 {
		t.Errorf("%d errors kept, %d counted as dropped; want 1 and at least %d", kept, dropped, sessions-1)
	}
}

// failingHandler's ConsumeClaim fails at once, which ends the session.
type failingHandler struct{}

func (failingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (failingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (failingHandler) ConsumeClaim(sarama.ConsumerGroupSession, sarama.ConsumerGroupClaim) error {
	return errors.New("handler failed")
}
