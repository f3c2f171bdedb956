// Command prometheus serves a consumer group's metrics, and sarama's, at
// /metrics in Prometheus' text format, while the group consumes.
//
// It lives in a module of its own so that the library's go.mod does not
// pull in the Prometheus client. The bridge is Collector: a
// prometheus.Collector over a go-metrics registry, the one sarama and the
// group write to (sarama.Config.MetricRegistry).
package main

import (
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metrics "github.com/rcrowley/go-metrics"
)

// Collector exposes every metric of a go-metrics registry: counters as
// counters, gauges as gauges, histograms as summaries (count, sum and the
// 0.5, 0.9, 0.99 quantiles), meters as counters of their count. Names are
// prefixed and made legal ("zkgroup-commit-latency-ms" becomes
// "<prefix>_zkgroup_commit_latency_ms"). The per-partition lag gauges
// ("zkgroup-lag-<topic>-<partition>") become one gauge,
// "<prefix>_zkgroup_lag", with topic and partition labels.
type Collector struct {
	prefix   string
	registry metrics.Registry
}

// NewCollector returns a Collector of r with the given name prefix.
func NewCollector(prefix string, r metrics.Registry) *Collector {
	return &Collector{prefix: prefix, registry: r}
}

// Describe sends nothing: the metrics come and go with the registry, so the
// collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

var (
	illegal = regexp.MustCompile(`[^a-zA-Z0-9_]`)
	lagName = regexp.MustCompile(`^zkgroup-lag-(.+)-([0-9]+)$`)
)

// Collect sends every metric of the registry as it is now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.registry.Each(func(name string, m any) {
		if sub := lagName.FindStringSubmatch(name); sub != nil {
			if g, ok := m.(metrics.Gauge); ok {
				desc := prometheus.NewDesc(c.prefix+"_zkgroup_lag", "high-water mark minus committed offset", []string{"topic", "partition"}, nil)
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(g.Value()), sub[1], sub[2])
			}
			return
		}
		full := c.prefix + "_" + illegal.ReplaceAllString(strings.ReplaceAll(name, "-", "_"), "_")
		desc := prometheus.NewDesc(full, name, nil, nil)
		switch v := m.(type) {
		case metrics.Counter:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v.Count()))
		case metrics.Gauge:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(v.Value()))
		case metrics.GaugeFloat64:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v.Value())
		case metrics.Meter:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v.Snapshot().Count()))
		case metrics.Histogram:
			s := v.Snapshot()
			qs := []float64{0.5, 0.9, 0.99}
			ps := s.Percentiles(qs)
			quantiles := make(map[float64]float64, len(qs))
			for i, q := range qs {
				quantiles[q] = ps[i]
			}
			ch <- prometheus.MustNewConstSummary(desc, uint64(s.Count()), float64(s.Sum()), quantiles)
		}
	})
}
