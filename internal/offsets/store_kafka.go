package offsets

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// kafkaStore keeps offsets as Kafka's group offsets (GroupOffsets). Kafka
// knows no claims: every commit checks the claim right before its request
// goes out (kafkaFence), and what Kafka holds is read back once a commit
// round, so a late commit of an old owner is written over (kafkaDue).
type kafkaStore struct {
	env   *env
	owned func() map[string][]int32 // the tracked partitions, by topic
	// counts is set when Kafka is the only store: its commits are the
	// group's commits (metrics, verbose log).
	counts bool
}

// Read implements Store. The read takes no context (sarama's admin
// retries for up to Admin.Retry.Max times Net.ReadTimeout): it is waited
// for only until Deps.Closing, then abandoned with an error wrapping
// ErrGroupClosing.
func (s *kafkaStore) Read(tp TopicPartition) (Stored, error) {
	st := nothingStored
	next, err := untilClosing(s.env.deps.Closing, func() (int64, error) {
		return s.env.deps.Kafka.Fetch(tp.Topic, tp.Partition)
	})
	if err != nil {
		return st, fmt.Errorf("read the offset committed to Kafka: %w", err)
	}
	st.KafkaNext = next
	return st, nil
}

// Commit implements Store: a pending offset is committed at once, and one
// already committed again when it is due (kafkaDue).
func (s *kafkaStore) Commit(o *Partition, next int64, dirty bool) error {
	if !dirty {
		// Written again only when kafkaRefresh has passed.
		return s.commitKafka(o, o.Tracker.CommittedOffset(), false)
	}
	return s.commitKafka(o, next, true)
}

// Due implements Store.
func (s *kafkaStore) Due(o *Partition) bool {
	return s.kafkaDue(o, o.Tracker.CommittedOffset(), time.Now(), true)
}

// RewindAsReset implements Store: Kafka knows no epochs, so a rewind
// cannot end the claim; it does not apply.
func (s *kafkaStore) RewindAsReset(*Partition, int64) (bool, error) { return false, nil }

// Align implements Store: one store is never behind itself.
func (s *kafkaStore) Align(*Partition, Stored) bool { return false }

// Reset implements Store (see resetWithKafka).
func (s *kafkaStore) Reset() error { return s.resetWithKafka() }

// Bounds of the attempts of one commit to Kafka (see commitKafka).
const (
	kafkaCommitBackoff    = 100 * time.Millisecond // after the first failed attempt; doubles
	kafkaCommitMaxBackoff = time.Second
)

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
// claimed elsewhere, and the claim is checked before every attempt, each a
// single OffsetCommit request (retryKafkaCommit), and again immediately
// before that request is sent, once the coordinator is known (a lookup can
// take seconds: see KafkaOffsets.coordinator). The commit's deadline is
// the shorter of Zookeeper.Timeout and Net.ReadTimeout after it began: no
// attempt starts later, no wait for a coordinator lookup lasts longer, and
// no request is sent after it; an attempt waits for its answer at most
// Net.ReadTimeout, and no longer once Close stopped waiting for the
// partitions (ErrGroupClosing). What remains is the window of one request:
// one already sent when the claim moves can land after the new owner's
// commit. It only ever stores an offset this instance marked (so no message
// is skipped), and the new owner's next commit round finds it (kafkaDue)
// and writes its own offset again: within one commit interval plus that
// round's requests.
func (s *kafkaStore) commitKafka(o *Partition, target int64, force bool) error {
	now := time.Now()
	if target < 0 || (!force && !s.kafkaDue(o, target, now, false)) {
		return nil
	}
	deadline := now.Add(s.kafkaCommitBudget())
	var sent time.Time
	err := retryKafkaCommit(deadline, time.Now, time.Sleep,
		func() error { return s.kafkaFence(o) },
		func() error {
			var fenced error
			err := s.sendKafkaCommit(o.TP, target, deadline, func() error {
				if fenced = s.kafkaFence(o); fenced == nil {
					sent = time.Now()
				}
				return fenced
			})
			switch {
			case fenced != nil:
				return fenced
			case err != nil:
				return kafkaCommitError{err}
			}
			return nil
		})
	var failed kafkaCommitError
	switch {
	case errors.Is(err, kazoo.ErrClaimLost):
		return nil // the claim watch reports the loss
	case errors.As(err, &failed):
		return partitionError(o.TP.Topic, o.TP.Partition, err)
	case err != nil:
		return partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("offset %d not committed to Kafka: %w", target, err))
	}
	o.kafka.next.Store(target)
	o.kafka.at.Store(sent.UnixNano())
	o.Tracker.Committed(target)
	if s.counts {
		s.env.committed(o.TP, time.Since(now), o.lag(target))
		if s.env.cfg.VerboseLogging {
			s.env.log().Debug("committed to Kafka", "topic", o.TP.Topic, "partition", o.TP.Partition, "next", target)
		}
	}
	return nil
}

// sendKafkaCommit makes one attempt of a commit of next to Kafka for tp:
// through the store's commitFenced when it has one (ready is called right
// before the request goes out), or else ready, then the store's commit,
// waited for until Close stops waiting for the partitions (closeExpired:
// an error wrapping errKafkaCommitInDoubt, the commit going on). An error
// of ready is returned as it is, and nothing is sent.
func (s *kafkaStore) sendKafkaCommit(tp TopicPartition, next int64, deadline time.Time, ready func() error) error {
	store := s.env.deps.Kafka
	if f, ok := store.(fencedCommitter); ok {
		return f.commitFenced(tp.Topic, tp.Partition, next, deadline, ready)
	}
	if err := ready(); err != nil {
		return err
	}
	_, err := untilClosing(s.env.deps.Closing, func() (struct{}, error) {
		return struct{}{}, store.Commit(tp.Topic, tp.Partition, next)
	})
	if errors.Is(err, ErrGroupClosing) {
		return fmt.Errorf("offset %d for %s/%d: %w", next, tp.Topic, tp.Partition, errKafkaCommitInDoubt)
	}
	return err
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
// it the claim may be another's) and Net.ReadTimeout (one attempt's wait),
// as Config.KafkaCommitBudget says.
func (s *kafkaStore) kafkaCommitBudget() time.Duration {
	if b := s.env.cfg.KafkaCommitBudget; b > 0 {
		return b
	}
	return kazoo.DefaultSessionTimeout
}

// kafkaDue reports whether Kafka should be given target for o now: it
// differs from what this instance last wrote, or that was written
// kafkaRefresh ago (kafkaState.due); or Kafka was seen holding something
// else after that write was sent (an old owner's commit that landed late,
// an operator's change, an expiry). What Kafka holds is read in one
// OffsetFetch request for every owned partition, once a commit round:
// refresh (hasWork) reads it again when half a commit interval old, which
// holds the round up for that request (at most the coordinator lookup and
// Net.ReadTimeout; a failed read is not retried before the next round);
// commitKafka uses the last read as it stands, never waiting for one in
// flight (heldOffsets). With Offsets.CommitInterval 0 it is never read.
func (s *kafkaStore) kafkaDue(o *Partition, target int64, now time.Time, refresh bool) bool {
	if o.kafka.due(target, now) {
		return true
	}
	reader, ok := s.env.deps.Kafka.(heldOffsetsReader)
	if target < 0 || !ok || s.env.cfg.CommitInterval <= 0 {
		return false
	}
	var owned func() map[string][]int32
	if refresh {
		owned = s.owned
	}
	sent, held, err := reader.held(s.env.cfg.CommitInterval/2, owned)
	if err != nil {
		s.env.log().Debug("reading the group's offsets in Kafka failed; the next round reads again", "err", err)
	}
	n, ok := held[o.TP]
	return ok && n != target && sent.UnixNano() > o.kafka.at.Load()
}

// kafkaFence returns nil when a commit to Kafka may be made for o: its
// claim has not been seen to end (kazoo.ErrClaimLost otherwise), the
// ZooKeeper session holding it is the current one, and the session fence
// does not hold delivery paused (errFencedOff). Partitions tracked without
// a claim (InitializePartition) are not fenced, as their ZooKeeper commits
// are not.
func (s *kafkaStore) kafkaFence(o *Partition) error {
	if o.Claim == nil {
		return nil
	}
	if o.lost.Load() {
		return kazoo.ErrClaimLost
	}
	if s.env.deps.Session() != o.Claim.SessionID {
		return fmt.Errorf("the ZooKeeper session holding the claim ended: %w", kazoo.ErrClaimLost)
	}
	if s.env.deps.FencedOff() {
		return errFencedOff
	}
	return nil
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
// connection) and did not already run out of its deadline or end because
// Close stopped waiting (ErrGroupClosing).
func retryableCommit(err error) bool {
	if kazoo.IsRetryable(err) {
		return true
	}
	var kc kafkaCommitError
	if !errors.As(err, &kc) {
		return false
	}
	for _, permanent := range []error{
		errKafkaCommitDeadline, ErrGroupClosing, sarama.ErrClosedClient, sarama.ErrUnsupportedVersion,
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

// deadlineTimer returns a channel that fires at deadline (never for a zero
// deadline) and the function that stops its timer.
func deadlineTimer(deadline time.Time) (<-chan time.Time, func()) {
	if deadline.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(deadline))
	return t.C, func() { t.Stop() }
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

// resetWithKafka resets the group's offsets in Kafka and then in ZooKeeper,
// only while no other member is registered (ErrResetWhileMembersRun).
// Kafka goes first: a member that starts in between reads no Kafka offset
// once ZooKeeper's reset is made, so it cannot take the old one back to
// ZooKeeper; and the members are listed again afterwards, since one that
// registered meanwhile may have committed an old offset to Kafka after its
// deletion.
func (s *kafkaStore) resetWithKafka() error {
	storage, group := s.env.cfg.Kind.String(), s.env.cfg.Group
	others, err := s.env.deps.OtherMembers()
	if err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s: %w", group, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: group %s has other members registered (%s): Offsets.ResetOffsets with Offsets.Storage %q "+
			"deletes the group's offsets in Kafka, which knows nothing of their claims; close them first",
			ErrResetWhileMembersRun, group, strings.Join(others, ", "), storage)
	}
	if err := s.env.deps.Kafka.Reset(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in Kafka: %w", err)
	}
	if err := s.env.deps.Registry.ResetOffsets(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in ZooKeeper (Kafka's are deleted): %w", err)
	}
	if others, err = s.env.deps.OtherMembers(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s after the reset: %w", group, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: members of group %s registered while Offsets.ResetOffsets (Offsets.Storage %q) reset its offsets (%s): "+
			"the reset may not hold (one of them may have committed an offset from before it); close them and join again",
			ErrResetWhileMembersRun, group, storage, strings.Join(others, ", "))
	}
	return nil
}

// untilClosing runs call, which takes no context, and returns its result,
// or ErrGroupClosing as soon as closing is closed (nil: never); the call
// goes on in its goroutine.
func untilClosing[T any](closing <-chan struct{}, call func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-closing:
		var zero T
		return zero, ErrGroupClosing
	}
}
