package consumergroup

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// kafkaOffsetStore stores the group's offsets as Kafka group offsets,
// through the group coordinator: OffsetFetch to read, and standalone
// OffsetCommit requests (generation -1, no member ID) to write, as any
// client that commits for a group without joining it does. The broker
// accepts such commits while the group has no broker-coordinated members,
// which is the case of a group coordinated through ZooKeeper; it refuses
// them (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION) while a
// sarama.ConsumerGroup or a Java consumer with the same group ID is running.
//
// A commit is one OffsetCommit request, sent to the coordinator here rather
// than through sarama's ClusterAdmin, which retries a moved coordinator by
// itself (Admin.Retry.Max times, up to Net.ReadTimeout each) with nobody
// checking the claim in between: the offset manager makes every attempt,
// each after checking the claim (see commitKafka). sarama's OffsetManager is
// not used either: it commits on its own timer and reports failures
// asynchronously, while every commit here is a decision of the offset
// manager with an exact outcome. Reads, and the reset (made while no other
// member runs), go through the admin and its retries: they move no offset
// behind an owner's back.
type kafkaOffsetStore struct {
	client sarama.Client
	admin  sarama.ClusterAdmin // shares client; never closed (that would close the client)
	group  string
	check  heldOffsets // what Kafka holds for the owned partitions, read once a commit round
}

// newKafkaOffsetStore returns the Kafka store of group's offsets over client.
func newKafkaOffsetStore(client sarama.Client, group string) (*kafkaOffsetStore, error) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("Kafka offset storage: %w", err)
	}
	return &kafkaOffsetStore{client: client, admin: admin, group: group}, nil
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

// commit implements groupOffsetStore: one OffsetCommit request, never
// retried here. An answer saying the coordinator moved, or a broken
// connection, has the coordinator looked up again before commit returns,
// so that the next attempt goes out as soon as its claim check passes.
func (s *kafkaOffsetStore) commit(topic string, partition int32, next int64) error {
	if err := s.commitOnce(topic, partition, next); err != nil {
		return fmt.Errorf("commit offset %d of group %s for %s/%d to Kafka: %w", next, s.group, topic, partition, err)
	}
	return nil
}

// commitOnce sends the OffsetCommit request of commit, built as sarama's
// admin builds it for the configured Version.
func (s *kafkaOffsetStore) commitOnce(topic string, partition int32, next int64) (err error) {
	defer s.refreshIfMoved(&err)
	coordinator, err := s.client.Coordinator(s.group)
	if err != nil {
		return err
	}
	req := sarama.NewOffsetCommitRequest(s.client.Config(), s.group)
	var timestamp int64
	if req.Version == 1 {
		timestamp = sarama.ReceiveTime
	}
	req.AddBlockWithLeaderEpoch(topic, partition, next, -1, timestamp, "")
	resp, err := coordinator.CommitOffset(req)
	if err != nil {
		return err
	}
	kerr, ok := resp.Errors[topic][partition]
	switch {
	case !ok:
		return errors.New("the coordinator's answer omits the partition")
	case !errors.Is(kerr, sarama.ErrNoError):
		return kerr
	}
	return nil
}

// refreshIfMoved looks the group's coordinator up again after a request
// failed in a way that says it may have moved: NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE, or no answer at all (a broken connection, a
// broker gone). sarama reconnects a broken connection by itself; only a
// move needs the lookup.
func (s *kafkaOffsetStore) refreshIfMoved(err *error) {
	var kerr sarama.KError
	if *err == nil || (errors.As(*err, &kerr) &&
		kerr != sarama.ErrNotCoordinatorForConsumer && kerr != sarama.ErrConsumerCoordinatorNotAvailable) {
		return
	}
	_ = s.client.RefreshCoordinator(s.group)
}

// held implements heldOffsetsReader.
func (s *kafkaOffsetStore) held(maxAge time.Duration, owned func() map[string][]int32) (time.Time, map[topicPartition]int64, error) {
	var read func() (map[topicPartition]int64, error)
	if owned != nil {
		read = func() (map[topicPartition]int64, error) { return s.fetchAll(owned()) }
	}
	return s.check.get(maxAge, read)
}

// fetchAll reads what Kafka holds for parts in one OffsetFetch request to
// the coordinator, not retried (the next commit round reads again). A
// partition whose block carries an error is left out; -1: none stored.
func (s *kafkaOffsetStore) fetchAll(parts map[string][]int32) (_ map[topicPartition]int64, err error) {
	if len(parts) == 0 {
		return nil, nil
	}
	defer s.refreshIfMoved(&err)
	coordinator, err := s.client.Coordinator(s.group)
	if err != nil {
		return nil, err
	}
	resp, err := coordinator.FetchOffset(sarama.NewOffsetFetchRequest(s.client.Config().Version, s.group, parts))
	if err != nil {
		return nil, err
	}
	if gerr := resp.GroupError(); !errors.Is(gerr, sarama.ErrNoError) {
		return nil, gerr
	}
	out := make(map[topicPartition]int64)
	for topic, ps := range parts {
		for _, p := range ps {
			if b := resp.GetBlock(topic, p); b != nil && errors.Is(b.Err, sarama.ErrNoError) {
				out[topicPartition{topic, p}] = max(b.Offset, -1)
			}
		}
	}
	return out, nil
}

// reset implements groupOffsetStore: it deletes each committed offset of
// the group (OffsetDelete, Kafka 2.4), which the broker allows for a group
// without broker-coordinated members.
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

// heldOffsetsReader is a groupOffsetStore that reads what it holds for many
// partitions in one request (kafkaOffsetStore): the offset manager compares
// that with what the owner committed, once a commit round.
type heldOffsetsReader interface {
	// held returns what the store held for the owned partitions when last
	// read, and when that read was sent; it reads again first when that
	// read is maxAge old, unless owned is nil. err is the failure of a
	// read made now (offsets are then nil).
	held(maxAge time.Duration, owned func() map[string][]int32) (sent time.Time, offsets map[topicPartition]int64, err error)
}

// heldOffsets is the last read of heldOffsetsReader.
type heldOffsets struct {
	mu      sync.Mutex // held during a read: callers meanwhile wait for it, not send their own
	sent    time.Time  // when the last read was sent; zero: never
	offsets map[topicPartition]int64
}

// get returns the last read and when it was sent, reading again with read
// first when it is maxAge old (never when read is nil).
func (h *heldOffsets) get(maxAge time.Duration, read func() (map[topicPartition]int64, error)) (time.Time, map[topicPartition]int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var err error
	if read != nil && time.Since(h.sent) >= maxAge {
		h.sent = time.Now()
		h.offsets, err = read()
	}
	return h.sent, h.offsets, err
}

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
var ErrResetWhileMembersRun = errors.New("consumergroup: offsets cannot be reset in Kafka while other members of the group run")

// openKafkaOffsets sets up the Kafka offset store when Offsets.Storage uses
// it, and makes the reset Offsets.ResetOffsets asks for (see
// resetWithKafka).
func (cg *ConsumerGroup) openKafkaOffsets() error {
	if !cg.config.Offsets.Storage.usesKafka() {
		return nil
	}
	store, err := newKafkaOffsetStore(cg.client, cg.name)
	if err != nil {
		return fmt.Errorf("consumergroup: %w", err)
	}
	cg.kafkaOffsets = store
	if cg.config.Offsets.ResetOffsets {
		return cg.resetWithKafka(store)
	}
	return nil
}

// resetWithKafka resets the group's offsets in Kafka and then in ZooKeeper,
// only while no other member is registered (ErrResetWhileMembersRun).
// Kafka goes first: a member that starts in between reads no Kafka offset
// once ZooKeeper's reset is made, so it cannot take the old one back to
// ZooKeeper; and the members are listed again afterwards, since one that
// registered meanwhile may have committed an old offset to Kafka after its
// deletion.
func (cg *ConsumerGroup) resetWithKafka(store groupOffsetStore) error {
	storage := cg.config.Offsets.Storage
	others, err := cg.otherMembers()
	if err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s: %w", cg.name, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: group %s has other members registered (%s): Offsets.ResetOffsets with Offsets.Storage %q "+
			"deletes the group's offsets in Kafka, which knows nothing of their claims; close them first",
			ErrResetWhileMembersRun, cg.name, strings.Join(others, ", "), string(storage))
	}
	if err := store.reset(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in Kafka: %w", err)
	}
	if err := cg.group.ResetOffsets(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in ZooKeeper (Kafka's are deleted): %w", err)
	}
	if others, err = cg.otherMembers(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s after the reset: %w", cg.name, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: members of group %s registered while Offsets.ResetOffsets (Offsets.Storage %q) reset its offsets (%s): "+
			"the reset may not hold (one of them may have committed an offset from before it); close them and join again",
			ErrResetWhileMembersRun, cg.name, string(storage), strings.Join(others, ", "))
	}
	return nil
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

// Bounds of the attempts of one commit to Kafka (see commitKafka).
const (
	kafkaCommitBackoff    = 100 * time.Millisecond // after the first failed attempt; doubles
	kafkaCommitMaxBackoff = time.Second
)

// errKafkaCommitDeadline: a commit to Kafka gave up, its deadline too near
// for another attempt. The offset stays pending; the next round tries again.
var errKafkaCommitDeadline = errors.New("no time left for another attempt before the commit's deadline")

// commitKafka commits target to Kafka if force is set or it is due (see
// kafkaDue), provided the claim still holds as far as this instance knows
// (kafkaFence). It records target as committed: with kafka storage that is
// the group's commit; with dual storage target is already committed to
// ZooKeeper. The caller holds o.commitMu.
//
// Kafka knows nothing of the claim's epoch, so a commit to Kafka cannot be
// made atomic with the epoch check the way a ZooKeeper commit is. What
// stands in for it: the claim watch marks the partition lost within a
// ZooKeeper round trip of any change to the claim, the session fence pauses
// delivery and commits before the session can expire and the partition be
// claimed elsewhere, and the claim is checked immediately before every
// attempt, each a single OffsetCommit request (retryKafkaCommit). No
// attempt starts later than the commit's deadline, the shorter of
// Zookeeper.Timeout and Net.ReadTimeout after the commit began; an attempt
// waits for its answer at most Net.ReadTimeout. What remains is the window
// of one attempt: a request already sent when the claim moves can land
// after the new owner's commit. It only ever stores an offset this instance
// marked (so no message is skipped), and the new owner's next commit round
// finds it (kafkaDue) and writes its own offset again: within one commit
// interval plus that round's requests.
func (om *zookeeperOffsetManager) commitKafka(o *ownedOffsets, target int64, force bool) error {
	now := time.Now()
	if target < 0 || (!force && !om.kafkaDue(o, target, now, false)) {
		return nil
	}
	var sent time.Time
	err := retryKafkaCommit(now.Add(om.kafkaCommitBudget()), time.Now, time.Sleep,
		func() error { return om.kafkaFence(o) },
		func() error {
			sent = time.Now()
			if err := om.cg.kafkaOffsets.commit(o.tp.Topic, o.tp.Partition, target); err != nil {
				return kafkaCommitError{err}
			}
			return nil
		})
	var failed kafkaCommitError
	switch {
	case errors.Is(err, kazoo.ErrClaimLost):
		return nil // the claim watch reports the loss
	case errors.As(err, &failed):
		return newPartitionError(o.tp.Topic, o.tp.Partition, err)
	case err != nil:
		return newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("offset %d not committed to Kafka: %w", target, err))
	}
	o.kafka.next.Store(target)
	o.kafka.at.Store(sent.UnixNano())
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

// retryKafkaCommit makes attempt, each time right after fence allows it,
// until it succeeds, fence refuses (its error is returned), it fails for
// good (not retryableCommit), or the deadline is too near for another
// attempt (the last error, wrapping errKafkaCommitDeadline). Between
// attempts it sleeps kafkaCommitBackoff, doubling up to
// kafkaCommitMaxBackoff. now and sleep are the clock (tests pass a fake).
func retryKafkaCommit(deadline time.Time, now func() time.Time, sleep func(time.Duration), fence, attempt func() error) error {
	backoff := kafkaCommitBackoff
	for {
		if err := fence(); err != nil {
			return err
		}
		err := attempt()
		if err == nil || !retryableCommit(err) {
			return err
		}
		if deadline.Sub(now()) <= backoff {
			return kafkaCommitError{fmt.Errorf("%w: %w", errKafkaCommitDeadline, err)}
		}
		sleep(backoff)
		backoff = min(2*backoff, kafkaCommitMaxBackoff)
	}
}

// kafkaCommitBudget is how long after a commit to Kafka began an attempt
// of it may still start: the shorter of the ZooKeeper session timeout (past
// it the claim may be another's) and Net.ReadTimeout (one attempt's wait).
func (om *zookeeperOffsetManager) kafkaCommitBudget() time.Duration {
	c := om.cg.config
	if c == nil || c.Config == nil || c.Zookeeper == nil {
		return kazoo.DefaultSessionTimeout
	}
	return min(c.Zookeeper.Timeout, c.Net.ReadTimeout)
}

// kafkaDue reports whether Kafka should be given target for o now: it
// differs from what this instance last wrote, or that was written
// kafkaRefresh ago (kafkaState.due); or Kafka was seen holding something
// else after that write was sent (an old owner's commit that landed late,
// an operator's change, an expiry). What Kafka holds is read in one
// OffsetFetch request for every owned partition, once a commit round:
// refresh (hasWork) reads it again when half a commit interval old, which
// holds the round up for that request (at most Net.ReadTimeout; a failed
// read is not retried before the next round); commitKafka uses the same
// read. With Offsets.CommitInterval 0 it is never read.
func (om *zookeeperOffsetManager) kafkaDue(o *ownedOffsets, target int64, now time.Time, refresh bool) bool {
	if o.kafka.due(target, now) {
		return true
	}
	reader, ok := om.cg.kafkaOffsets.(heldOffsetsReader)
	if target < 0 || !ok || om.config.CommitInterval <= 0 {
		return false
	}
	var owned func() map[string][]int32
	if refresh {
		owned = om.ownedByTopic
	}
	sent, held, err := reader.held(om.config.CommitInterval/2, owned)
	if err != nil {
		om.cg.log.Debug("reading the group's offsets in Kafka failed; the next round reads again", "err", err)
	}
	n, ok := held[o.tp]
	return ok && n != target && sent.UnixNano() > o.kafka.at.Load()
}

// ownedByTopic lists the tracked partitions by topic.
func (om *zookeeperOffsetManager) ownedByTopic() map[string][]int32 {
	out := make(map[string][]int32)
	for _, o := range om.snapshot() {
		out[o.tp.Topic] = append(out[o.tp.Topic], o.tp.Partition)
	}
	return out
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
// offset, or (with Kafka storage) an offset Kafka should be given
// (kafkaDue, which reads what Kafka holds once a round).
func (om *zookeeperOffsetManager) hasWork(o *ownedOffsets) bool {
	if _, dirty := o.tracker.Pending(); dirty {
		return true
	}
	return om.storage.usesKafka() && om.kafkaDue(o, o.tracker.committedOffset(), time.Now(), true)
}

// kafkaCommitError is a commit request to Kafka that failed (as opposed
// to one the claim's fence held back).
type kafkaCommitError struct{ err error }

func (e kafkaCommitError) Error() string { return e.err.Error() }
func (e kafkaCommitError) Unwrap() error { return e.err }

// retryableCommit reports whether a failed commit may succeed if made again
// at once: a ZooKeeper error kazoo calls retryable, or a Kafka commit that
// failed for a reason other than the group's state, its permissions or the
// protocol version (a coordinator moving or loading, a timeout, a lost
// connection) and did not already run out of its deadline.
func retryableCommit(err error) bool {
	if kazoo.IsRetryable(err) {
		return true
	}
	var kc kafkaCommitError
	if !errors.As(err, &kc) {
		return false
	}
	for _, permanent := range []error{
		errKafkaCommitDeadline, sarama.ErrClosedClient, sarama.ErrUnsupportedVersion,
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
