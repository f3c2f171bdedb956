package worker

import (
	"testing"

	"github.com/IBM/sarama"
)

// BenchmarkIntegrationHandOver measures the per-message cost of the
// worker's hand-over without Kafka: pump takes messages from a partition
// consumer whose channel is full already and hands them to a reader that
// marks each, through Messages()'s unbuffered channel and through a
// claim's buffered one. The kazoo session only serves the claim's
// validity check, hence the local stack's ZooKeeper. Run:
//
//	go test -run=NONE -bench=IntegrationHandOver ./internal/worker/
func BenchmarkIntegrationHandOver(b *testing.B) {
	for _, c := range []struct {
		name     string
		capacity int
	}{{"unbuffered", 0}, {"buffered", 64}} {
		b.Run(c.name, func(b *testing.B) {
			f := newPumpFixture(b, c.capacity)
			pc := &fakePartitionConsumer{
				msgs: make(chan *sarama.ConsumerMessage, 4096),
				errs: make(chan *sarama.ConsumerError, 1),
			}
			go func() {
				for i := 0; i < b.N; i++ {
					pc.msgs <- &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: int64(i)}
				}
			}()
			res := make(chan pumpResult, 1)
			b.ResetTimer()
			go func() {
				r, e, ended := f.w.pump(f.owned, openedConsumer(pc), 0)
				res <- pumpResult{r, e, ended}
			}()
			for i := 0; i < b.N; i++ {
				m := <-f.out
				f.owned.Mark(m, m.Offset)
			}
			b.StopTimer()
			f.w.Stop(false)
			<-res
		})
	}
}
