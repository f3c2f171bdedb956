package integration

import (
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
)

// countOf returns the sum of the counter name (without its labels, such
// as "zkgroup-feed-fallbacks") over every group registered in reg; 0 when
// none has it.
func countOf(reg metrics.Registry, name string) int64 {
	var n int64
	reg.Each(func(_ string, m any) {
		if l, ok := consumergroup.LabelsOf(m); ok && l.Name == name {
			if c, ok := m.(metrics.Counter); ok {
				n += c.Count()
			}
		}
	})
	return n
}

// groupMetric returns group's metric name (without its labels) from reg,
// or nil.
func groupMetric(reg metrics.Registry, group, name string) any {
	return reg.Get(consumergroup.MetricLabels{Name: name, Group: group, Partition: -1}.FullName())
}
