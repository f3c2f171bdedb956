package integration

import (
	"testing"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationFeedWithinResponseLimit: with more partitions holding a
// backlog than one fetch response can carry (their fetch sizes add up to
// eight times Consumer.Fetch.MaxBytes), every message still comes through
// the batch feed, none through sarama's partition consumer: a round the
// broker would cut short at its response limit answers the partitions
// after the cut with no records, which a feed cannot tell from batches
// compacted away, so it would fall back to sarama for the rest of its
// pass. Every message is delivered once, in order, and committed.
func TestIntegrationFeedWithinResponseLimit(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 64)
	want := produceRecords(t, topic, 64*200, func(*sarama.Config) {})
	cfg := testConfig()
	cfg.Consumer.Fetch.Default = 32 << 10
	cfg.Consumer.Fetch.MaxBytes = 256 << 10 // 64 partitions ask for 2 MiB
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	group := testenv.UniqueName("g")
	got := readAllHandler(t, group, topic, want.total(), cfg, func() {
		if n := fellBack(reg); n > 0 {
			t.Errorf("%d feeds fell back to sarama's partition consumer", n)
		}
	})
	checkRecords(t, want, got)
	checkCommittedEnds(t, group, topic, want)
}
