package consumergroup

import (
	"github.com/zkgroup/kafka/internal/monitor"
	"github.com/zkgroup/kafka/internal/offsets"
)

// startMonitors starts the group's monitors (package monitor): the session
// watch, and with Metrics.LagInterval the lag refresh. See docs/metrics.md.
func (cg *ConsumerGroup) startMonitors() {
	kafka := monitor.NewKafka(cg.client)
	cg.monitors = monitor.Start(cg.config.Metrics.LagInterval, monitor.Deps{
		Session:       cg.kazoo,
		SessionGauges: sessionGauges{cg.met()},
		Owned:         ownedPartitions{cg},
		Leaders:       kafka,
		Offsets:       kafka,
		Lag:           ownedPartitions{cg},
		Log:           cg.log,
	})
}

// sessionGauges are the group's session gauges, as the session watch sets
// them.
type sessionGauges struct{ m *groupMetrics }

func (g sessionGauges) SetConnected(connected bool) { g.m.connected.Update(gaugeBool(connected)) }
func (g sessionGauges) AddExpirations(n int64)      { g.m.expirations.Inc(n) }
func (g sessionGauges) ClearFenced()                { g.m.fenced.Update(0) }

func gaugeBool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ownedPartitions are the claimed partitions the committer tracks, and
// their lag gauges, as the lag refresh reads and sets them.
type ownedPartitions struct{ cg *ConsumerGroup }

// Owned implements monitor.Owned.
func (o ownedPartitions) Owned() []monitor.Partition {
	var out []monitor.Partition
	for _, p := range o.cg.offsetManager.Snapshot() {
		if p.Claim != nil { // not one tracked through InitializePartition
			out = append(out, monitor.Partition{TP: monitor.TopicPartition(p.TP), Offsets: p})
		}
	}
	return out
}

// SetLag implements monitor.LagGauges: the gauge is set only while p's
// claim is still the one the committer tracks.
func (o ownedPartitions) SetLag(p monitor.Partition, lag int64) {
	tp := offsets.TopicPartition(p.TP)
	o.cg.met().setLagIf(topicPartition(tp), lag, func() bool { return p.Offsets == o.cg.offsetManager.Lookup(tp) })
}
