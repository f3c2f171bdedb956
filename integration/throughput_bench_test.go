package integration

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationThroughput compares, in one run, reading a 4-partition
// topic of N messages (ZKGROUP_BENCH_MESSAGES, default 500000) from start to
// end:
//
//   - sarama: bare sarama PartitionConsumers, one reader goroutine each;
//   - sarama-one-reader: the same, read by one goroutine through one channel,
//     the shape of an application that processes serially;
//   - consumergroup: JoinConsumerGroup, CommitUpto on every message, Close;
//     msgs/s-to-last leaves out the Close (final commit and release), as
//     the readers above have none.
//
// Each iteration includes its setup and teardown (for the group: register,
// claim, and the final commit and release). msgs/s is N*iterations over the
// total time. Run:
//
//	go test -run=NONE -bench=IntegrationThroughput -benchtime=3x -count=3 ./integration/
func BenchmarkIntegrationThroughput(b *testing.B) {
	testenv.Integration(b)
	n := 500_000
	if v, err := strconv.Atoi(os.Getenv("ZKGROUP_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	topic := newTopic(b, 4)
	counts := produce(b, topic, n)

	measure := func(b *testing.B, once func(b *testing.B)) {
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			once(b)
		}
		b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "msgs/s")
	}

	b.Run("sarama", func(b *testing.B) {
		measure(b, func(b *testing.B) {
			consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), saramaConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer consumer.Close()
			var wg sync.WaitGroup
			for p, last := range counts {
				pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
				if err != nil {
					b.Fatal(err)
				}
				defer pc.AsyncClose()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for m := range pc.Messages() {
						if m.Offset == last-1 {
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	})

	b.Run("sarama-one-reader", func(b *testing.B) {
		measure(b, func(b *testing.B) {
			consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), saramaConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer consumer.Close()
			merged := make(chan *sarama.ConsumerMessage)
			stop := make(chan struct{})
			defer close(stop)
			for p := range counts {
				pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
				if err != nil {
					b.Fatal(err)
				}
				defer pc.AsyncClose()
				go func() {
					for m := range pc.Messages() {
						select {
						case merged <- m:
						case <-stop:
							return
						}
					}
				}()
			}
			for got := 0; got < n; got++ {
				<-merged
			}
		})
	})

	b.Run("consumergroup", func(b *testing.B) {
		var joining, closing time.Duration
		start := time.Now()
		measure(b, func(b *testing.B) {
			t0 := time.Now()
			cg := join(b, testenv.UniqueName("bench"), []string{topic}, nil)
			joining += time.Since(t0)
			for got := 0; got < n; got++ {
				_ = cg.CommitUpto(<-cg.Messages())
			}
			t1 := time.Now()
			if err := cg.Close(); err != nil {
				b.Fatal(err)
			}
			closing += time.Since(t1)
		})
		b.ReportMetric(float64(joining.Milliseconds())/float64(b.N), "join-ms")
		b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms")
		// From the join to the last message, as the other readers are
		// measured (they have no Close that commits and releases).
		b.ReportMetric(float64(n*b.N)/(time.Since(start)-closing).Seconds(), "msgs/s-to-last")
	})
}
