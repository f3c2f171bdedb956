package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationThroughput compares, in one run, reading a 4-partition
// topic of benchMessages messages with bare sarama PartitionConsumers and
// with a consumer group that marks every message. Compare the msgs/s
// metrics of the two sub-benchmarks:
//
//	go test -run=NONE -bench=IntegrationThroughput -benchtime=5x ./integration/
const benchMessages = 50_000

func BenchmarkIntegrationThroughput(b *testing.B) {
	testenv.Integration(b)
	topic := newTopic(b, 4)
	counts := produce(b, topic, benchMessages)

	b.Run("sarama", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			cfg := saramaConfig()
			consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			for p, n := range counts {
				pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func(n int64) {
					defer wg.Done()
					for m := range pc.Messages() {
						if m.Offset == n-1 {
							return
						}
					}
				}(n)
				defer pc.Close()
			}
			wg.Wait()
			b.ReportMetric(float64(benchMessages)/time.Since(start).Seconds(), "msgs/s")
			_ = consumer.Close()
		}
	})

	b.Run("consumergroup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			cg := join(b, testenv.UniqueName("bench"), []string{topic}, nil)
			for got := 0; got < benchMessages; got++ {
				m := <-cg.Messages()
				_ = cg.CommitUpto(m)
			}
			b.ReportMetric(float64(benchMessages)/time.Since(start).Seconds(), "msgs/s")
			if err := cg.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
