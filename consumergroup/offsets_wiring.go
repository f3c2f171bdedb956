// The group's side of internal/offsets: the committer's configuration
// and dependencies from the group, the stores opened at the join, and
// the worker as the committer's Owner.

package consumergroup

import (
	"fmt"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// ErrResetWhileMembersRun is returned, wrapped with the group's name and
// the members' ids, by JoinConsumerGroup (and the other joins) when
// Offsets.ResetOffsets is set with Offsets.Storage kafka or dual and other
// members of the group are registered. A ZooKeeper reset fences the
// partitions' owners (their epochs move); a reset of Kafka's offsets
// cannot: a running member may read the old Kafka offset back, or commit
// one after the reset. So it is refused, as kafka-consumer-groups.sh
// --reset-offsets refuses a group with active members. Close every member
// first (one that crashed stays registered until its ZooKeeper session
// expires). It is also returned, after the reset, when a member registered
// while it was made: the reset may then not hold.
var ErrResetWhileMembersRun = offsets.ErrResetWhileMembersRun

// openOffsetStores opens Kafka's group offsets when Offsets.Storage uses
// them, and makes the reset Offsets.ResetOffsets asks for, in the stores
// Offsets.Storage names (a reset with Kafka in them runs only while no
// other member is registered: ErrResetWhileMembersRun).
func (cg *ConsumerGroup) openOffsetStores() error {
	if cg.config.Offsets.Storage.usesKafka() {
		store, err := offsets.NewKafkaOffsets(cg.client, offsets.KafkaConfig{
			Group: cg.name, Closing: cg.closeExpired, Stopping: cg.stopper,
		})
		if err != nil {
			return fmt.Errorf("consumergroup: %w", err)
		}
		cg.kafkaOffsets = store
	}
	if cg.config.Offsets.ResetOffsets {
		return offsets.NewStore(cg.offsetsConfig(), cg.offsetsDeps()).Reset()
	}
	return nil
}

// offsetsConfig is the committer's configuration from cg's Config.
func (cg *ConsumerGroup) offsetsConfig() offsets.Config {
	cfg := offsets.Config{Group: cg.name}
	if c := cg.config; c != nil {
		cfg.Kind = c.Offsets.Storage.kind()
		cfg.CommitInterval = c.Offsets.CommitInterval
		if c.Config != nil && c.Zookeeper != nil {
			cfg.KafkaCommitBudget = min(c.Zookeeper.Timeout, c.Net.ReadTimeout)
		}
	}
	return cfg
}

// offsetsDeps is what the committer uses of cg. The Kafka store and the
// closing channel are taken as they are now: build it only after connect
// has opened the stores.
func (cg *ConsumerGroup) offsetsDeps() offsets.Deps {
	return offsets.Deps{
		Log:          cg.log,
		Metrics:      offsetMetrics{cg},
		Report:       cg.report,
		Registry:     offsets.KazooRegistry(cg.group, func() *kazoo.ConsumergroupInstance { return cg.instance }),
		Kafka:        cg.kafkaOffsets,
		Session:      cg.liveSessionID,
		FencedOff:    func() bool { return cg.gate.Paused() },
		OtherMembers: cg.otherMembers,
		Closing:      cg.closeExpired,
	}
}

// liveSessionID returns the id of the ZooKeeper session, 0 once it is
// closed: go-zookeeper keeps reporting a closed session's id, and the
// fence of the commits to Kafka must not take a closed session (whose
// owner nodes are gone) for the one holding the claim.
func (cg *ConsumerGroup) liveSessionID() int64 {
	if s, _ := cg.kazoo.Session(); s.Status == kazoo.SessionClosed {
		return 0
	}
	return cg.kazoo.SessionID()
}

// otherMembers returns the ids of the group's registered members other
// than this instance.
func (cg *ConsumerGroup) otherMembers() ([]string, error) {
	instances, err := cg.group.Instances()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, i := range instances {
		if cg.instance == nil || i.ID != cg.instance.ID {
			ids = append(ids, i.ID)
		}
	}
	return ids, nil
}

// offsetMetrics counts the committer's commits and conflicts in the
// group's metrics.
type offsetMetrics struct{ cg *ConsumerGroup }

func (m offsetMetrics) Committed(tp offsets.TopicPartition, latency time.Duration, lag int64) {
	g := m.cg.met()
	g.commits.Inc(1)
	g.commitLatency.Update(ms(latency))
	if lag >= 0 {
		g.lag(topicPartition(tp)).Update(lag)
	}
}

func (m offsetMetrics) Conflict() { m.cg.met().conflicts.Inc(1) }
