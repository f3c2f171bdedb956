package consumergroup

import (
	"sync"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// The group's metrics, registered in the embedded sarama config's
// MetricRegistry (the registry sarama users already export), beside
// sarama's own. Each name carries the group, after a "/" (which no group
// or topic name can hold), so groups sharing a registry never share a
// metric; LabelsOf returns a metric's labels without parsing its name.
// Names (docs/metrics.md has the details):
//
//	zkgroup-claims/<group>                          counter: partitions claimed
//	zkgroup-claim-wait-ms/<group>                   histogram: from a partition's assignment to its claim
//	zkgroup-rebalances/<group>                      counter: assignment changes of this instance
//	zkgroup-rebalance-ms/<group>                    histogram: from a change to every gained partition claimed
//	zkgroup-partitions-owned/<group>                gauge: partitions this instance owns now
//	zkgroup-commits/<group>                         counter: offset commits written
//	zkgroup-commit-latency-ms/<group>               histogram: one fenced commit's round trip
//	zkgroup-offset-conflicts/<group>                counter: offsets found changed underneath
//	zkgroup-fence-pauses/<group>                    counter: deliveries paused by the session fence
//	zkgroup-feed-retries/<group>                    counter: batch feed fetches retried after a moved leader or a broken connection
//	zkgroup-feed-fallbacks/<group>                  counter: partitions' passes handed from the batch feed to sarama's partition consumer by a feed error
//	zkgroup-session-connected/<group>               gauge: 1 while the ZooKeeper session is connected, else 0
//	zkgroup-session-fenced/<group>                  gauge: 1 while the session fence holds delivery paused, else 0
//	zkgroup-session-expirations/<group>             counter: ZooKeeper sessions that expired and were replaced
//	zkgroup-errors-dropped/<group>                  counter: errors dropped because Errors() was full
//	zkgroup-lag/<group>/<topic>/<partition>         gauge: high-water mark minus the committed offset, per owned partition
//
// Counters rather than meters: a meter starts go-metrics' global ticker
// goroutine, and exporters compute rates from counters anyway. With
// metrics.UseNilMetrics (sarama's switch), they cost nothing.
type groupMetrics struct {
	registry      metrics.Registry
	group         string
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
	connected     metrics.Gauge
	fenced        metrics.Gauge
	expirations   metrics.Counter
	errorsDropped metrics.Counter

	// lagMu orders updates of the lag gauges against their removal, so a
	// refresh that raced a partition's end does not register its gauge
	// again (see setLagIf).
	lagMu sync.Mutex
}

func newGroupMetrics(r metrics.Registry, group string) *groupMetrics {
	if r == nil {
		r = metrics.NewRegistry()
	}
	m := &groupMetrics{registry: r, group: group}
	counter := func(name string) metrics.Counter {
		return m.register(name, func() any { return labelledCounter{metrics.NewCounter(), m.labels(name)} }).(metrics.Counter)
	}
	gauge := func(name string) metrics.Gauge {
		return m.register(name, func() any { return labelledGauge{metrics.NewGauge(), m.labels(name)} }).(metrics.Gauge)
	}
	hist := func(name string) metrics.Histogram {
		return m.register(name, func() any {
			return labelledHistogram{metrics.NewHistogram(metrics.NewExpDecaySample(1028, 0.015)), m.labels(name)}
		}).(metrics.Histogram)
	}
	m.claims = counter("zkgroup-claims")
	m.claimWait = hist("zkgroup-claim-wait-ms")
	m.rebalances = counter("zkgroup-rebalances")
	m.rebalanceTime = hist("zkgroup-rebalance-ms")
	m.owned = gauge("zkgroup-partitions-owned")
	m.commits = counter("zkgroup-commits")
	m.commitLatency = hist("zkgroup-commit-latency-ms")
	m.conflicts = counter("zkgroup-offset-conflicts")
	m.fencePauses = counter("zkgroup-fence-pauses")
	m.feedRetries = counter("zkgroup-feed-retries")
	m.feedFallbacks = counter("zkgroup-feed-fallbacks")
	m.connected = gauge("zkgroup-session-connected")
	m.fenced = gauge("zkgroup-session-fenced")
	m.expirations = counter("zkgroup-session-expirations")
	m.errorsDropped = counter("zkgroup-errors-dropped")
	return m
}

// labels are the labels of the group's metric name.
func (m *groupMetrics) labels(name string) MetricLabels {
	return MetricLabels{Name: name, Group: m.group, Partition: -1}
}

// register returns the metric registered under name's full name (name and
// labels), registering the one build returns if there is none.
func (m *groupMetrics) register(name string, build func() any) any {
	return m.registry.GetOrRegister(m.labels(name).FullName(), build)
}

// lagLabels are the labels of tp's lag gauge.
func (m *groupMetrics) lagLabels(tp topicPartition) MetricLabels {
	return MetricLabels{Name: "zkgroup-lag", Group: m.group, Topic: tp.Topic, Partition: tp.Partition}
}

// lag returns the lag gauge of one partition.
func (m *groupMetrics) lag(tp topicPartition) metrics.Gauge {
	l := m.lagLabels(tp)
	return m.registry.GetOrRegister(l.FullName(), func() any { return labelledGauge{metrics.NewGauge(), l} }).(metrics.Gauge)
}

// setLagIf sets tp's lag gauge to lag if owned still reports the
// partition as owned, checked under the lock dropLag takes: a refresh that
// read the partition before its end never brings its gauge back.
func (m *groupMetrics) setLagIf(tp topicPartition, lag int64, owned func() bool) {
	m.lagMu.Lock()
	defer m.lagMu.Unlock()
	if owned() {
		m.lag(tp).Update(lag)
	}
}

// dropLag unregisters a partition's lag gauge once this instance no longer
// owns it, so the registry shows only owned partitions.
func (m *groupMetrics) dropLag(tp topicPartition) {
	m.lagMu.Lock()
	defer m.lagMu.Unlock()
	m.registry.Unregister(m.lagLabels(tp).FullName())
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// discardMetrics serves groups built without JoinConsumerGroup (tests).
var discardMetrics = newGroupMetrics(metrics.NewRegistry(), "")

// met returns the group's metrics.
func (cg *ConsumerGroup) met() *groupMetrics {
	if cg.metrics == nil {
		return discardMetrics
	}
	return cg.metrics
}

// met returns the group's metrics.
func (g *HandlerGroup) met() *groupMetrics {
	if g.metrics == nil {
		return discardMetrics
	}
	return g.metrics
}
