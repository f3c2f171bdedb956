package consumergroup

import (
	"fmt"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// The group's metrics, registered in the embedded sarama config's
// MetricRegistry (the registry sarama users already export), beside
// sarama's own. Names:
//
//	zkgroup-claims                     counter: partitions claimed
//	zkgroup-claim-wait-ms              histogram: from a partition's assignment to its claim
//	zkgroup-rebalances                 counter: assignment changes of this instance
//	zkgroup-rebalance-ms               histogram: from a change to every gained partition claimed
//	zkgroup-partitions-owned           gauge: partitions this instance owns now
//	zkgroup-commits                    counter: offset commits written
//	zkgroup-commit-latency-ms          histogram: one fenced commit's round trip
//	zkgroup-offset-conflicts           counter: offsets found changed underneath
//	zkgroup-fence-pauses               counter: deliveries paused by the session fence
//	zkgroup-feed-retries               counter: batch feed fetches retried after a moved leader or a broken connection
//	zkgroup-feed-fallbacks             counter: partitions' passes handed from the batch feed to sarama's partition consumer by a feed error
//	zkgroup-lag-<topic>-<partition>    gauge: high-water mark minus the committed offset
//
// Counters rather than meters: a meter starts go-metrics' global ticker
// goroutine, and exporters compute rates from counters anyway. With
// metrics.UseNilMetrics (sarama's switch), they cost nothing.
type groupMetrics struct {
	registry      metrics.Registry
	claims        metrics.Counter
	claimWait     metrics.Histogram
	rebalances    metrics.Counter
	rebalanceTime metrics.Histogram
	owned         metrics.Gauge
	commits       metrics.Counter
	commitLatency metrics.Histogram
	conflicts     metrics.Counter
	fencePauses   metrics.Counter
	feedRetries   metrics.Counter
	feedFallbacks metrics.Counter
}

func newGroupMetrics(r metrics.Registry) *groupMetrics {
	if r == nil {
		r = metrics.NewRegistry()
	}
	hist := func(name string) metrics.Histogram {
		return metrics.GetOrRegisterHistogram(name, r, metrics.NewExpDecaySample(1028, 0.015))
	}
	return &groupMetrics{
		registry:      r,
		claims:        metrics.GetOrRegisterCounter("zkgroup-claims", r),
		claimWait:     hist("zkgroup-claim-wait-ms"),
		rebalances:    metrics.GetOrRegisterCounter("zkgroup-rebalances", r),
		rebalanceTime: hist("zkgroup-rebalance-ms"),
		owned:         metrics.GetOrRegisterGauge("zkgroup-partitions-owned", r),
		commits:       metrics.GetOrRegisterCounter("zkgroup-commits", r),
		commitLatency: hist("zkgroup-commit-latency-ms"),
		conflicts:     metrics.GetOrRegisterCounter("zkgroup-offset-conflicts", r),
		fencePauses:   metrics.GetOrRegisterCounter("zkgroup-fence-pauses", r),
		feedRetries:   metrics.GetOrRegisterCounter("zkgroup-feed-retries", r),
		feedFallbacks: metrics.GetOrRegisterCounter("zkgroup-feed-fallbacks", r),
	}
}

// lag returns the lag gauge of one partition.
func (m *groupMetrics) lag(tp topicPartition) metrics.Gauge {
	return metrics.GetOrRegisterGauge(fmt.Sprintf("zkgroup-lag-%s-%d", tp.Topic, tp.Partition), m.registry)
}

// dropLag unregisters a partition's lag gauge once this instance no longer
// owns it, so the registry shows only owned partitions.
func (m *groupMetrics) dropLag(tp topicPartition) {
	m.registry.Unregister(fmt.Sprintf("zkgroup-lag-%s-%d", tp.Topic, tp.Partition))
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// discardMetrics serves groups built without JoinConsumerGroup (tests).
var discardMetrics = newGroupMetrics(metrics.NewRegistry())

// met returns the group's metrics.
func (cg *ConsumerGroup) met() *groupMetrics {
	if cg.metrics == nil {
		return discardMetrics
	}
	return cg.metrics
}
