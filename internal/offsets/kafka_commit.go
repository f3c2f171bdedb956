package offsets

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

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
// Kafka knows no epochs: the claim is checked before every attempt and
// right before its request is written, and no request goes out after the
// commit's deadline (kafkaCommitBudget). See docs/kafka-offsets.md.
func (s *kafkaStore) commitKafka(o *Partition, target int64, force bool) error {
	now := time.Now()
	if target < 0 || (!force && !s.kafkaDue(o, target, now, false)) {
		return nil
	}
	deadline := now.Add(s.kafkaCommitBudget())
	var sent time.Time
	err := retryKafkaCommit(deadline, time.Now, nil,
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
// waited for until Close stops waiting for the partitions (Deps.Closing:
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
	_, err := UntilClosing(s.env.deps.Closing, func() (struct{}, error) {
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
// attempts it waits kafkaCommitBackoff, doubling up to
// kafkaCommitMaxBackoff. now and timer are the clock (nil timer: real
// timers; tests pass a fake).
func retryKafkaCommit(deadline time.Time, now func() time.Time, timer backoff.Timer, fence, attempt func() error) error {
	waits := &untilDeadline{BackOff: newKafkaCommitBackOff(), deadline: deadline, now: now}
	err := backoff.RetryNotifyWithTimer(func() error {
		if err := fence(); err != nil {
			return backoff.Permanent(err)
		}
		err := attempt()
		if err != nil && !retryableCommit(err) {
			return backoff.Permanent(err)
		}
		return err
	}, waits, nil, timer)
	if waits.passed {
		return kafkaCommitError{fmt.Errorf("%w: %w", errKafkaCommitDeadline, err)}
	}
	return err
}

func newKafkaCommitBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(kafkaCommitBackoff),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(kafkaCommitMaxBackoff),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // the deadline bounds it
	)
}

// untilDeadline is a BackOff that stops once the deadline is no further
// off than the next wait: no attempt starts after the deadline. passed
// says it stopped for that reason.
type untilDeadline struct {
	backoff.BackOff
	deadline time.Time
	now      func() time.Time
	passed   bool
}

// NextBackOff implements backoff.BackOff.
func (b *untilDeadline) NextBackOff() time.Duration {
	next := b.BackOff.NextBackOff()
	if next != backoff.Stop && b.deadline.Sub(b.now()) <= next {
		b.passed = true
		return backoff.Stop
	}
	return next
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
