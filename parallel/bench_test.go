package parallel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// The benchmark of docs/parallel.md: 10,000 messages with 10,000 distinct
// keys, a handler that sleeps a pseudo-random 0-5 ms per message, through
// parallel (MaxInFlight 64 and 256) and through a plain sequential
// handler, on 1 partition and spread over 64 partitions, each partition
// a fake claim of its own run concurrently as a group would. It reports
// msgs/s and the per-key order violations fn saw (must be 0).
//
//	go test -run '^$' -bench BenchmarkKeyed -benchtime 1x ./parallel/
func BenchmarkKeyed(b *testing.B) {
	const messages, keys = 10_000, 10_000
	for _, partitions := range []int{1, 64} {
		for _, h := range []struct {
			name string
			make func(Func) sarama.ConsumerGroupHandler
		}{
			{"sequential", func(fn Func) sarama.ConsumerGroupHandler { return sequential{fn} }},
			{"parallel-64", func(fn Func) sarama.ConsumerGroupHandler { return NewHandler(fn, Config{}) }},
			{"parallel-256", func(fn Func) sarama.ConsumerGroupHandler { return NewHandler(fn, Config{MaxInFlight: 256}) }},
		} {
			b.Run(fmt.Sprintf("partitions=%d/%s", partitions, h.name), func(b *testing.B) {
				var violations int
				for range b.N {
					violations += runKeyed(b, h.make, messages, keys, partitions)
				}
				b.ReportMetric(float64(messages*b.N)/b.Elapsed().Seconds(), "msgs/s")
				b.ReportMetric(float64(violations), "order-violations")
			})
		}
	}
}

// runKeyed runs messages messages (key i%keys, partition i%partitions)
// through one handler per partition and returns the per-key order
// violations.
func runKeyed(b *testing.B, mk func(Func) sarama.ConsumerGroupHandler, messages, keys, partitions int) int {
	rec := newRecorder()
	finished := make([]atomic.Int64, partitions)
	fn := func(_ context.Context, msg *sarama.ConsumerMessage) error {
		rec.begin(msg)
		r := rand.New(rand.NewPCG(uint64(msg.Offset), uint64(msg.Partition)))
		time.Sleep(time.Duration(r.Int64N(int64(5*time.Millisecond) + 1)))
		rec.end(msg, true)
		finished[msg.Partition].Add(1)
		return nil
	}
	var wg sync.WaitGroup
	for p := range partitions {
		s := newFakeSession()
		c := newFakeClaim()
		h := mk(fn)
		go func() {
			for i := p; i < messages; i += partitions {
				// Offsets are global here so the recorder keys them apart.
				c.msgs <- &sarama.ConsumerMessage{Topic: "t", Partition: int32(p), Offset: int64(i), Key: fmt.Appendf(nil, "k%d", i%keys)}
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc := consume(h, s, c)
			for finished[p].Load() < int64((messages-p+partitions-1)/partitions) {
				time.Sleep(time.Millisecond)
			}
			close(c.msgs)
			if err := <-errc; err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return rec.violations()
}

// sequential is the plain handler the benchmark compares with: one
// message at a time, marked once processed.
type sequential struct{ fn Func }

func (sequential) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (sequential) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h sequential) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		if err := h.fn(s.Context(), msg); err != nil {
			return err
		}
		s.MarkMessage(msg, "")
	}
	return nil
}
