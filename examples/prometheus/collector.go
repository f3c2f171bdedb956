// Command prometheus serves a consumer group's metrics, and sarama's, at
// /metrics in Prometheus' text format, and the member's health at /healthz,
// while the group consumes.
//
// It lives in a module of its own so that the library's go.mod does not
// pull in the Prometheus client. The bridge is Collector: a
// prometheus.Collector over a go-metrics registry, the one sarama and the
// group write to (sarama.Config.MetricRegistry). Healthz serves the
// group's State.
package main

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
)

// Collector exposes every metric of a go-metrics registry: counters as
// counters, gauges as gauges, histograms as summaries (count, sum and the
// 0.5, 0.9, 0.99 quantiles), meters as counters of their count. Names are
// prefixed and made legal ("zkgroup-commit-latency-ms" becomes
// "<prefix>_zkgroup_commit_latency_ms"). The group's metrics carry their
// labels (consumergroup.LabelsOf): each becomes one metric named after
// its name without labels, with a "group" label, and for the lag gauges
// "topic" and "partition" labels too ("zkgroup-lag/g/t/3" becomes
// <prefix>_zkgroup_lag{group="g",topic="t",partition="3"}).
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

var illegal = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// Collect sends every metric of the registry as it is now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.registry.Each(func(name string, m any) {
		var labels, values []string
		if l, ok := consumergroup.LabelsOf(m); ok {
			name = l.Name
			labels, values = []string{"group"}, []string{l.Group}
			if l.Topic != "" {
				labels = append(labels, "topic", "partition")
				values = append(values, l.Topic, strconv.Itoa(int(l.Partition)))
			}
		}
		full := c.prefix + "_" + illegal.ReplaceAllString(strings.ReplaceAll(name, "-", "_"), "_")
		desc := prometheus.NewDesc(full, name, labels, nil)
		switch v := m.(type) {
		case metrics.Counter:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v.Count()), values...)
		case metrics.Gauge:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(v.Value()), values...)
		case metrics.GaugeFloat64:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v.Value(), values...)
		case metrics.Meter:
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v.Snapshot().Count()), values...)
		case metrics.Histogram:
			s := v.Snapshot()
			qs := []float64{0.5, 0.9, 0.99}
			ps := s.Percentiles(qs)
			quantiles := make(map[float64]float64, len(qs))
			for i, q := range qs {
				quantiles[q] = ps[i]
			}
			ch <- prometheus.MustNewConstSummary(desc, uint64(s.Count()), float64(s.Sum()), quantiles, values...)
		}
	})
}
