package integration

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationSkewedThroughput reads a 4-partition topic whose N
// messages (ZKGROUP_BENCH_MESSAGES, default 200000) are all in partition 0,
// the other three staying empty, with the handler path and with sarama's
// group, interleaved (rotating order), reporting handler/sarama-group and
// the stream rates. With idle partitions beside a busy one, a fetch path
// whose long polls for the idle ones hold up the busy one's next fetch
// shows here, not in the evenly spread throughput benchmark. Run:
//
//	go test -run=NONE -bench=IntegrationSkewedThroughput -benchtime=4x ./integration/
func BenchmarkIntegrationSkewedThroughput(b *testing.B) {
	testenv.Integration(b)
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("ZKGROUP_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	topic := newTopic(b, 4)
	produceTo(b, topic, map[int32]int{0: n})

	consumeAll := func(b *testing.B, g sarama.ConsumerGroup, phases *benchPhases, t0 time.Time) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newCountingHandler(n, cancel)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
		phases.add(t0, h)
	}
	runs := []func(b *testing.B, phases *benchPhases){
		func(b *testing.B, phases *benchPhases) {
			t0 := time.Now()
			g, err := consumergroup.NewConsumerGroup(testenv.UniqueName("bench"), []string{testenv.ZKAddr()}, testConfig())
			if err != nil {
				b.Fatal(err)
			}
			consumeAll(b, g, phases, t0)
		},
		func(b *testing.B, phases *benchPhases) {
			t0 := time.Now()
			cfg := saramaConfig()
			cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
			cfg.Consumer.MaxWaitTime = testConfig().Consumer.MaxWaitTime
			g, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), testenv.UniqueName("bench"), cfg)
			if err != nil {
				b.Fatal(err)
			}
			consumeAll(b, g, phases, t0)
		},
	}
	var phases [2]benchPhases
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range runs {
			k := (i + j) % len(runs)
			t0 := time.Now()
			runs[k](b, &phases[k])
			took[k] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(n*b.N)/took[0].Seconds(), "handler-msgs/s")
	b.ReportMetric(float64(n*b.N)/took[1].Seconds(), "sarama-group-msgs/s")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "handler/sarama-group")
	phases[0].reportAs(b, "handler-")
	phases[1].reportAs(b, "sarama-group-")
}
