package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationDenseCompressedBatch: one zstd batch of 5,000 empty
// values (about 4 KB compressed: fewer bytes than records), alone at the
// end of the log, is consumed whole through the batch feed. Read as
// sarama reads it, it looked cut off: every fetch of it failed, and the
// partition fell back to sarama's partition consumer, which stalled on it.
func TestIntegrationDenseCompressedBatch(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	const n = 5000
	p := newProducer(t, func(cfg *sarama.Config) {
		cfg.Producer.Compression = sarama.CompressionZSTD
		cfg.Producer.Flush.Messages = n // one batch
		cfg.Producer.Flush.Frequency = time.Second
	})
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder{}}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("produce: %v", err)
	}
	_ = p.Close()

	cfg := testConfig()
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	cg := join(t, testenv.UniqueName("g"), []string{topic}, cfg)
	var mu sync.Mutex
	got := map[int64]bool{}
	done := drainGroup(cg, func(m *sarama.ConsumerMessage) {
		mu.Lock()
		got[m.Offset] = true
		mu.Unlock()
		_ = cg.CommitUpto(m)
	}, func(err error) { t.Logf("error: %v", err) })
	waitFor(t, 30*time.Second, "every message of the batch", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
	closeGroup(t, cg)
	<-done
	if f := countOf(reg, "zkgroup-feed-fallbacks"); f != 0 {
		t.Errorf("%d passes fell back to sarama's partition consumer, want 0", f)
	}
}
