package consumergroup

import (
	"fmt"

	metrics "github.com/rcrowley/go-metrics"
)

// MetricLabels are the labels of one of the group's metrics: which metric,
// of which group, and for a partition's metric, which partition. Each
// metric the group registers carries its labels, so an exporter reads them
// with LabelsOf instead of parsing names (see docs/metrics.md).
type MetricLabels struct {
	// Name is the metric's name without its labels, such as
	// "zkgroup-commits" or "zkgroup-lag".
	Name string
	// Group is the consumer group's name.
	Group string
	// Topic is the partition's topic for a partition's metric
	// (zkgroup-lag); "" for the group's metrics.
	Topic string
	// Partition is the partition of a partition's metric; -1 for the
	// group's metrics.
	Partition int32
}

// FullName is the name the metric is registered under: Name, then the
// group, then for a partition's metric the topic and the partition, each
// after a "/". No group or topic name can hold a "/", so two groups (or
// partitions) never share a name.
func (l MetricLabels) FullName() string {
	if l.Topic == "" {
		return l.Name + "/" + l.Group
	}
	return fmt.Sprintf("%s/%s/%s/%d", l.Name, l.Group, l.Topic, l.Partition)
}

// LabelsOf returns the labels of metric, a value from the registry (as
// Registry.Each or Get hands it out), and false for a metric the group did
// not register (sarama's own, for instance).
func LabelsOf(metric any) (MetricLabels, bool) {
	if l, ok := metric.(labelled); ok {
		return l.metricLabels(), true
	}
	return MetricLabels{}, false
}

// labelled is a metric that knows its labels.
type labelled interface{ metricLabels() MetricLabels }

// The group's metrics: go-metrics' own, with their labels.
type (
	labelledCounter struct {
		metrics.Counter
		labels MetricLabels
	}
	labelledGauge struct {
		metrics.Gauge
		labels MetricLabels
	}
	labelledHistogram struct {
		metrics.Histogram
		labels MetricLabels
	}
)

func (m labelledCounter) metricLabels() MetricLabels   { return m.labels }
func (m labelledGauge) metricLabels() MetricLabels     { return m.labels }
func (m labelledHistogram) metricLabels() MetricLabels { return m.labels }
