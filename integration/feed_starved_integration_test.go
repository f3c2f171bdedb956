package integration

import (
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationFeedStarvedPartitions: 64 partitions with a backlog each
// and a response limit (Consumer.Fetch.MaxBytes) far below what one round
// of their batches holds. Kafka answers the partitions past the limit with
// no records; the batch feeds fetch those again instead of handing them to
// sarama's partition consumer: every message once, in order, and no
// partition's pass falls back (zkgroup-feed-fallbacks stays 0).
func TestIntegrationFeedStarvedPartitions(t *testing.T) {
	testenv.Integration(t)
	const partitions = 64
	topic := newTopic(t, partitions)
	counts := produce(t, topic, partitions*200)
	cfg := testConfig()
	cfg.Consumer.Fetch.MaxBytes = 16 << 10
	cfg.Consumer.Fetch.Default = 4 << 10
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	group := testenv.UniqueName("g")
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)
	cg := join(t, group, []string{topic}, cfg)
	done := consume(t, 1, cg, l)
	waitFor(t, 120*time.Second, "every message", func() bool { return l.distinct() >= partitions*200 })
	closeGroup(t, cg)
	<-done

	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages lost", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicates", d)
	}
	assertInOrder(t, l)
	h.assert(expectation{produced: counts})
	fallbacks := countOf(reg, "zkgroup-feed-fallbacks")
	if fallbacks != 0 {
		t.Errorf("%d partitions' passes fell back to sarama's partition consumer", fallbacks)
	}
}
