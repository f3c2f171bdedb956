package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationZstdTopicBesideHealthyTopic: a topic configured with
// compression.type=zstd and produced with zstd, and an uncompressed one,
// consumed by one group. Below Fetch v10 Kafka answers the zstd topic's
// partitions UNSUPPORTED_COMPRESSION_TYPE with null records, which sarama's
// non-flexible decoder rejects for the whole response; here both topics
// are read completely through the batch feed, and no partition's pass
// falls back to sarama's partition consumer (zkgroup-feed-fallbacks).
func TestIntegrationZstdTopicBesideHealthyTopic(t *testing.T) {
	testenv.Integration(t)
	zstd, healthy := newTopic(t, 2), newTopic(t, 2)
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	codec := "zstd"
	if err := admin.AlterConfig(sarama.TopicResource, zstd, map[string]*string{"compression.type": &codec}, false); err != nil {
		t.Fatalf("compression.type=zstd on %s: %v", zstd, err)
	}
	_ = admin.Close()
	const n = 1000
	want := map[string]producedRecords{
		zstd:    produceRecords(t, zstd, n, func(cfg *sarama.Config) { cfg.Producer.Compression = sarama.CompressionZSTD }),
		healthy: produceRecords(t, healthy, n, func(*sarama.Config) {}),
	}
	cfg := testConfig()
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	cg := join(t, testenv.UniqueName("g"), []string{zstd, healthy}, cfg)
	var mu sync.Mutex
	got := map[string]map[int64]bool{zstd: {}, healthy: {}}
	done := drainGroup(cg, func(m *sarama.ConsumerMessage) {
		mu.Lock()
		got[m.Topic][int64(m.Partition)<<32|m.Offset] = true
		mu.Unlock()
		_ = cg.CommitUpto(m)
	}, func(err error) { t.Logf("error: %v", err) })
	complete := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[zstd]) == want[zstd].total() && len(got[healthy]) == want[healthy].total()
	}
	waitFor(t, 60*time.Second, "both topics read", complete)
	closeGroup(t, cg)
	<-done
	if f := countOf(reg, "zkgroup-feed-fallbacks"); f != 0 {
		t.Errorf("%d partitions' passes fell back to sarama's partition consumer, want 0", f)
	}
}
