package consumergroup

import (
	"fmt"
	"sync/atomic"
	"time"
)

// OffsetStorage names where a group's committed offsets live: the value of
// Offsets.Storage.
type OffsetStorage string

const (
	// OffsetStorageZookeeper stores offsets in ZooKeeper only, under
	// /consumers/<group>/offsets, as Kafka's original high-level consumer
	// did. The default.
	OffsetStorageZookeeper OffsetStorage = "zookeeper"

	// OffsetStorageKafka stores offsets in Kafka only, as the group's
	// committed offsets (the __consumer_offsets topic), where Kafka's own
	// tools and broker-coordinated consumers read them. ZooKeeper still
	// coordinates the group: registrations, claims, epochs and fencing.
	OffsetStorageKafka OffsetStorage = "kafka"

	// OffsetStorageDual commits every offset to ZooKeeper (fenced by the
	// claim) and then to Kafka, and starts each claimed partition at the
	// higher of the two stored offsets: the migration step between the other
	// two, as Kafka's own dual.commit.enabled was.
	OffsetStorageDual OffsetStorage = "dual"

	// DefaultOffsetStorage is Offsets.Storage's default.
	DefaultOffsetStorage = OffsetStorageZookeeper
)

func (s OffsetStorage) valid() bool {
	return s == OffsetStorageZookeeper || s == OffsetStorageKafka || s == OffsetStorageDual
}

// usesZookeeper reports whether offsets are read from and committed to
// ZooKeeper: every storage but kafka (an empty one, which Validate refuses,
// acts as the default inside the package).
func (s OffsetStorage) usesZookeeper() bool {
	return s != OffsetStorageKafka
}

// usesKafka reports whether offsets are read from and committed to Kafka.
func (s OffsetStorage) usesKafka() bool {
	return s == OffsetStorageKafka || s == OffsetStorageDual
}

// groupOffsetStore is a store of the group's committed offsets other than
// ZooKeeper: Kafka's group offsets (kafkaOffsetStore). Offsets are "next"
// offsets, as in ZooKeeper; -1 means none stored. It knows nothing of
// claims: the offset manager decides whether a commit may be made.
type groupOffsetStore interface {
	// fetch returns the stored next offset of a partition, -1 if none.
	fetch(topic string, partition int32) (int64, error)
	// commit stores next as the partition's next offset, in one attempt:
	// the offset manager decides whether to try again (retryKafkaCommit).
	commit(topic string, partition int32, next int64) error
	// reset deletes every stored offset of the group.
	reset() error
}

// fencedCommitter is a groupOffsetStore whose commit may block before its
// request goes out (kafkaOffsetStore looks the coordinator up first): the
// offset manager's checks then have to be made after that, right before
// the request.
type fencedCommitter interface {
	// commitFenced is commit, with ready (when not nil) called right
	// before the request is sent: an error of ready is returned as it is,
	// and nothing is sent. Nothing is sent either once deadline (none when
	// zero) has passed: the error then wraps errKafkaCommitDeadline.
	commitFenced(topic string, partition int32, next int64, deadline time.Time, ready func() error) error
}

// storedOffsets is what the stores hold for a partition when it is claimed.
type storedOffsets struct {
	zkNext    int64 // ZooKeeper's next offset; -1: none, or not read
	zkVersion int32 // version of ZooKeeper's offset node; -1: none
	kafkaNext int64 // Kafka's next offset; -1: none, or not read
}

// start is where consumption starts (-1: nothing stored, Offsets.Initial).
func (s storedOffsets) start() int64 {
	return startOffset(s.zkNext, s.kafkaNext)
}

// startOffset picks the start of a partition from the offsets stored in
// ZooKeeper and in Kafka (-1 for a store that holds none, or is not used):
// the higher one. In dual mode ZooKeeper is written first, so Kafka is
// behind only when a commit to it failed or members not yet migrated
// committed to ZooKeeper alone; ZooKeeper is behind only when members
// already on Kafka-only storage committed. Either way the higher offset was
// committed last, by a member that held the claim: starting there loses
// nothing, and starting lower would deliver again what was processed.
func startOffset(zookeeper, kafka int64) int64 {
	return max(zookeeper, kafka, -1)
}

// readStored reads the stored offsets of tp from the stores in use. The
// read of Kafka's offset takes no context (sarama's admin retries for up
// to Admin.Retry.Max times Net.ReadTimeout): it is waited for only until
// Close stops waiting for the partitions (closeExpired), then abandoned
// with an error wrapping errGroupClosing.
func (cg *ConsumerGroup) readStored(tp topicPartition) (storedOffsets, error) {
	st := storedOffsets{zkNext: -1, zkVersion: -1, kafkaNext: -1}
	storage := cg.config.Offsets.Storage
	if storage.usesZookeeper() {
		next, version, err := cg.group.FetchOffsetVersion(tp.Topic, tp.Partition)
		if err != nil {
			return st, err
		}
		st.zkNext, st.zkVersion = next, version
	}
	if storage.usesKafka() {
		next, err := untilClosing(cg.closeExpired, func() (int64, error) {
			return cg.kafkaOffsets.fetch(tp.Topic, tp.Partition)
		}, nil)
		if err != nil {
			return st, fmt.Errorf("read the offset committed to Kafka: %w", err)
		}
		st.kafkaNext = next
	}
	return st, nil
}

// alignStores brings the stores that are behind the start offset up to it
// at once (dual storage): ZooKeeper by committing the start as a new
// position (fenced, like any commit), Kafka by the catch-up every commit
// makes. So both stores agree from the claim on, whichever one members
// migrated so far wrote last.
func (w *partitionWorker) alignStores(owned *ownedOffsets, st storedOffsets) {
	if w.cg.config.Offsets.Storage != OffsetStorageDual {
		return
	}
	start := st.start()
	switch {
	case start < 0:
		return // nothing stored anywhere: startAtInitial writes both
	case st.zkNext < start:
		owned.restartUncommitted(start)
		w.commitStart(owned)
	case st.kafkaNext < start:
		w.commitStart(owned)
	}
}

// kafkaRefresh is how often an offset committed to Kafka is written again
// although it did not move. Kafka expires the committed offsets of a group
// without members (as this group is, to Kafka) offsets.retention.minutes
// (7 days by default) after their last commit; rewriting them keeps the
// offsets of partitions that receive nothing for a long time.
const kafkaRefresh = time.Hour

// kafkaState is the Kafka side of an owned partition.
type kafkaState struct {
	next atomic.Int64 // next offset last committed to Kafka (or read from it); -1: none
	at   atomic.Int64 // when that commit's request was sent, in Unix nanoseconds; 0: never by us
}

// due reports whether Kafka should be given target now, as far as this
// instance's own writes tell: target differs from what it last wrote (or
// read at the claim), or that was not written for kafkaRefresh. What
// someone else wrote since is kafkaDue's to find.
func (k *kafkaState) due(target int64, now time.Time) bool {
	if target < 0 {
		return false
	}
	return k.next.Load() != target || now.UnixNano()-k.at.Load() >= int64(kafkaRefresh)
}
