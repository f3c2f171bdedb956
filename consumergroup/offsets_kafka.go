package consumergroup

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// kafkaOffsetStore stores the group's offsets as Kafka group offsets,
// through the group coordinator, with sarama's ClusterAdmin: OffsetFetch to
// read, and standalone OffsetCommit requests (generation -1, no member ID)
// to write, as any client that commits for a group without joining it does.
// The broker accepts such commits while the group has no broker-coordinated
// members, which is the case of a group coordinated through ZooKeeper; it
// refuses them (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION) while a
// sarama.ConsumerGroup or a Java consumer with the same group ID is running.
//
// ClusterAdmin is used rather than sarama's OffsetManager because every
// commit here is a decision of the offset manager, made after checking the
// claim, with an exact outcome per partition: sarama's OffsetManager commits
// on its own timer and reports failures asynchronously. The admin retries
// coordinator moves (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) itself,
// Config.Admin.Retry.Max times.
type kafkaOffsetStore struct {
	admin sarama.ClusterAdmin // shares the group's client; never closed (that would close the client)
	group string
}

// newKafkaOffsetStore returns the Kafka store of group's offsets over client.
func newKafkaOffsetStore(client sarama.Client, group string) (*kafkaOffsetStore, error) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("Kafka offset storage: %w", err)
	}
	return &kafkaOffsetStore{admin: admin, group: group}, nil
}

// fetch implements groupOffsetStore.
func (s *kafkaOffsetStore) fetch(topic string, partition int32) (int64, error) {
	resp, err := s.admin.ListConsumerGroupOffsets(s.group, map[string][]int32{topic: {partition}})
	if err != nil {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: %w", s.group, topic, partition, err)
	}
	block := resp.GetBlock(topic, partition)
	if block == nil {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: the coordinator's answer omits the partition", s.group, topic, partition)
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: %w", s.group, topic, partition, block.Err)
	}
	return max(block.Offset, -1), nil
}

// commit implements groupOffsetStore.
func (s *kafkaOffsetStore) commit(topic string, partition int32, next int64) error {
	offsets := map[string]map[int32]sarama.OffsetAndMetadata{
		topic: {partition: {Offset: next, LeaderEpoch: -1}},
	}
	resp, err := s.admin.AlterConsumerGroupOffsets(s.group, offsets, nil)
	if err == nil {
		kerr, ok := resp.Errors[topic][partition]
		switch {
		case !ok:
			err = errors.New("the coordinator's answer omits the partition")
		case !errors.Is(kerr, sarama.ErrNoError):
			err = kerr
		}
	}
	if err != nil {
		return fmt.Errorf("commit offset %d of group %s for %s/%d to Kafka: %w", next, s.group, topic, partition, err)
	}
	return nil
}

// reset implements groupOffsetStore: it deletes each committed offset of
// the group (OffsetDelete), which the broker allows for a group without
// broker-coordinated members.
func (s *kafkaOffsetStore) reset() error {
	resp, err := s.admin.ListConsumerGroupOffsets(s.group, nil)
	if err != nil {
		return fmt.Errorf("list the offsets of group %s: %w", s.group, err)
	}
	blocks := resp.Blocks
	if resp.Version >= 8 && len(resp.Groups) > 0 {
		blocks = resp.Groups[0].Blocks
	}
	for topic, parts := range blocks {
		for partition, block := range parts {
			if block == nil || block.Offset < 0 {
				continue
			}
			if err := s.admin.DeleteConsumerGroupOffset(s.group, topic, partition); err != nil {
				return fmt.Errorf("delete the offset of group %s for %s/%d: %w", s.group, topic, partition, err)
			}
		}
	}
	return nil
}

// openKafkaOffsets sets up the Kafka offset store when Offsets.Storage uses
// it, and deletes the group's Kafka offsets when Offsets.ResetOffsets asks
// for a reset (after the ZooKeeper reset, which fences the partitions'
// current owners by moving their epochs).
func (cg *ConsumerGroup) openKafkaOffsets() error {
	if !cg.config.Offsets.Storage.usesKafka() {
		return nil
	}
	store, err := newKafkaOffsetStore(cg.client, cg.name)
	if err != nil {
		return err
	}
	cg.kafkaOffsets = store
	if cg.config.Offsets.ResetOffsets {
		if err := store.reset(); err != nil {
			return fmt.Errorf("reset offsets: %w", err)
		}
	}
	return nil
}

// commitKafka commits target to Kafka if force is set or it is due (see
// kafkaState.due), provided the claim still holds as far as this instance
// knows (kafkaFence). It records target as committed: with kafka storage
// that is the group's commit; with dual storage target is already
// committed to ZooKeeper. The caller holds o.commitMu.
//
// Kafka knows nothing of the claim's epoch, so a commit to Kafka cannot be
// made atomic with the epoch check the way a ZooKeeper commit is. What
// stands in for it: the claim watch marks the partition lost within a
// ZooKeeper round trip of any change to the claim, the session fence pauses
// delivery and commits before the session can expire and the partition be
// claimed elsewhere, and the check is made immediately before the request
// is sent. What remains is a window of one notification plus one Kafka
// round trip: a commit already sent when the claim moves can land after the
// new owner's first commit. It only ever stores an offset this instance
// marked (so no message is skipped); it may move the new owner's offset
// back (messages delivered again) until the new owner's next commit, or
// overwrite an offset reset made in that window.
func (om *zookeeperOffsetManager) commitKafka(o *ownedOffsets, target int64, force bool) error {
	now := time.Now()
	if target < 0 || (!force && !o.kafka.due(target, now)) {
		return nil
	}
	if err := om.kafkaFence(o); err != nil {
		if errors.Is(err, kazoo.ErrClaimLost) {
			return nil // the claim watch reports the loss
		}
		return newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("offset %d not committed to Kafka: %w", target, err))
	}
	if err := om.cg.kafkaOffsets.commit(o.tp.Topic, o.tp.Partition, target); err != nil {
		return newPartitionError(o.tp.Topic, o.tp.Partition, kafkaCommitError{err})
	}
	o.kafka.next.Store(target)
	o.kafka.at.Store(now.UnixNano())
	o.tracker.Committed(target)
	if om.storage == OffsetStorageKafka {
		m := om.cg.met()
		m.commits.Inc(1)
		m.commitLatency.Update(ms(time.Since(now)))
		if o.worker != nil {
			if hwm := o.worker.hwm.Load(); hwm > 0 {
				m.lag(o.tp).Update(max(hwm-target, 0))
			}
		}
		if om.config.VerboseLogging {
			om.cg.log.Debug("committed to Kafka", "topic", o.tp.Topic, "partition", o.tp.Partition, "next", target)
		}
	}
	return nil
}

// errFencedOff: the instance is fenced off from ZooKeeper, so it cannot
// know whether its claims still hold; commits to Kafka wait.
var errFencedOff = errors.New("fenced off from ZooKeeper (the claim cannot be confirmed); the commit waits")

// kafkaFence returns nil when a commit to Kafka may be made for o: its
// claim has not been seen to end (kazoo.ErrClaimLost otherwise), the
// ZooKeeper session holding it is the current one, and the session fence
// does not hold delivery paused (errFencedOff). Partitions tracked without
// a claim (InitializePartition) are not fenced, as their ZooKeeper commits
// are not.
func (om *zookeeperOffsetManager) kafkaFence(o *ownedOffsets) error {
	if o.claim == nil {
		return nil
	}
	if o.lost.Load() {
		return kazoo.ErrClaimLost
	}
	if om.cg.kazoo.SessionID() != o.claim.SessionID {
		return fmt.Errorf("the ZooKeeper session holding the claim ended: %w", kazoo.ErrClaimLost)
	}
	if om.cg.gate.paused() {
		return errFencedOff
	}
	return nil
}

// hasWork reports whether commit has something to do for o: a pending
// offset, or (with Kafka storage) an offset Kafka should be given.
func (om *zookeeperOffsetManager) hasWork(o *ownedOffsets) bool {
	if _, dirty := o.tracker.Pending(); dirty {
		return true
	}
	return om.storage.usesKafka() && o.kafka.due(o.tracker.committedOffset(), time.Now())
}

// kafkaCommitError is a commit request to Kafka that failed (as opposed
// to one the claim's fence held back).
type kafkaCommitError struct{ err error }

func (e kafkaCommitError) Error() string { return e.err.Error() }
func (e kafkaCommitError) Unwrap() error { return e.err }

// retryableCommit reports whether a failed commit may succeed if made again
// at once: a ZooKeeper error kazoo calls retryable, or a Kafka commit that
// failed for a reason other than the group's state or its permissions (a
// coordinator moving or loading, a timeout, a lost connection), which
// sarama's admin has already retried for a while.
func retryableCommit(err error) bool {
	if kazoo.IsRetryable(err) {
		return true
	}
	var kc kafkaCommitError
	if !errors.As(err, &kc) {
		return false
	}
	for _, permanent := range []error{
		sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration, sarama.ErrRebalanceInProgress,
		sarama.ErrGroupAuthorizationFailed, sarama.ErrTopicAuthorizationFailed,
		sarama.ErrOffsetMetadataTooLarge, sarama.ErrUnknownTopicOrPartition,
	} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}
