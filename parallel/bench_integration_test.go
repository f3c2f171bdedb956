package parallel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/parallel"
)

// BenchmarkIntegrationKeyed is BenchmarkKeyed on the stack, through
// consumergroup's HandlerGroup: 10,000 messages with 10,000 distinct keys
// on 1 and on 64 partitions, a handler sleeping a pseudo-random 0-5 ms,
// parallel (MaxInFlight 64) against a plain sequential handler. Each
// iteration is a new group reading the topic from the start, timed from
// Consume to the last message processed (joining and claiming included).
//
//	go test -run '^$' -bench BenchmarkIntegrationKeyed -benchtime 1x ./parallel/
func BenchmarkIntegrationKeyed(b *testing.B) {
	testenv.Integration(b)
	const n, keys = 10_000, 10_000
	for _, partitions := range []int32{1, 64} {
		topic := testenv.UniqueName("parallel-bench")
		testenv.CreateTopic(b, topic, partitions)
		produceKeyed(b, topic, n, keys)
		for _, h := range []struct {
			name string
			make func(func(context.Context, *sarama.ConsumerMessage) error) sarama.ConsumerGroupHandler
		}{
			{"sequential", func(fn func(context.Context, *sarama.ConsumerMessage) error) sarama.ConsumerGroupHandler {
				return sequentialHandler{fn}
			}},
			{"parallel-64", func(fn func(context.Context, *sarama.ConsumerMessage) error) sarama.ConsumerGroupHandler {
				return parallel.NewHandler(fn, parallel.Config{})
			}},
		} {
			b.Run(fmt.Sprintf("partitions=%d/%s", partitions, h.name), func(b *testing.B) {
				violations := 0
				for range b.N {
					l := newLedger()
					g, err := consumergroup.NewConsumerGroup(testenv.UniqueName("parallel-bench"), []string{testenv.ZKAddr()}, groupConfig())
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					stop := consumeLoop(b, g, topic, h.make(l.fn(0, 5*time.Millisecond)), nil)
					for l.distinct() < n {
						time.Sleep(time.Millisecond)
					}
					elapsed := time.Since(start)
					stop()
					violations += l.orderViolations()
					b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
				}
				b.ReportMetric(float64(violations), "order-violations")
			})
		}
	}
}

// sequentialHandler processes one message at a time and marks it.
type sequentialHandler struct {
	fn func(context.Context, *sarama.ConsumerMessage) error
}

func (sequentialHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (sequentialHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h sequentialHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		if err := h.fn(s.Context(), msg); err != nil {
			return err
		}
		s.MarkMessage(msg, "")
	}
	return nil
}
