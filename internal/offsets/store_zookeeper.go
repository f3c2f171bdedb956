package offsets

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// zookeeperStore keeps offsets in ZooKeeper under
// /consumers/<group>/offsets, each commit fenced by the claim's epoch
// (unfenced for partitions tracked without a claim). It resolves
// ZooKeeper's two refusals itself: a moved epoch marks the partition lost
// and stops its owner; a conflict adopts the stored offset, drops pending
// marks, seeks the owner and reports a *ConflictError.
type zookeeperStore struct {
	env *env
}

// Read implements Store.
func (s *zookeeperStore) Read(tp TopicPartition) (Stored, error) {
	st := nothingStored
	next, version, err := s.env.deps.Registry.FetchOffsetVersion(tp.Topic, tp.Partition)
	if err != nil {
		return st, err
	}
	st.ZkNext, st.ZkVersion = next, version
	return st, nil
}

// Commit implements Store.
func (s *zookeeperStore) Commit(o *Partition, next int64, dirty bool) error {
	if !dirty {
		return nil
	}
	return s.commit(o, next)
}

// Due implements Store: ZooKeeper is written only when the offset moved.
func (s *zookeeperStore) Due(*Partition) bool { return false }

// Align implements Store: one store is never behind itself.
func (s *zookeeperStore) Align(*Partition, Stored) bool { return false }

// Reset implements Store: fenced (each partition's epoch moves with its
// offset), so it holds while members run.
func (s *zookeeperStore) Reset() error {
	if err := s.env.deps.Registry.ResetOffsets(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets: %w", err)
	}
	return nil
}

// commit commits next, which is pending.
func (s *zookeeperStore) commit(o *Partition, next int64) error {
	if o.Claim == nil {
		if err := s.env.deps.Registry.CommitOffset(o.TP.Topic, o.TP.Partition, next); err != nil {
			return partitionError(o.TP.Topic, o.TP.Partition, err)
		}
		o.Tracker.Committed(next)
		return nil
	}
	for {
		again, err := s.commitFenced(o, next)
		if !again {
			return err
		}
		var dirty, ok bool
		if next, dirty, ok = o.PendingOutsideRecall(); !dirty || !ok {
			return nil
		}
	}
}

// commitFenced makes one fenced commit of next. It returns again when a
// write in doubt turned out to be ours: the version is known now, and what
// was marked since may still need committing.
// See docs/in-doubt-commits.md.
func (s *zookeeperStore) commitFenced(o *Partition, next int64) (again bool, err error) {
	sent := time.Now()
	version, err := s.env.deps.Registry.CommitOffsetFenced(o.Claim, next, o.version)
	var conflict *kazoo.OffsetConflictError
	switch {
	case err == nil:
		s.env.committed(o.TP, time.Since(sent), o.lag(next))
		o.version = version
		o.inDoubt.Clear()
		o.Tracker.Committed(next)
		if s.env.cfg.VerboseLogging {
			s.env.log().Debug("committed", "topic", o.TP.Topic, "partition", o.TP.Partition, "next", next)
		}
		return false, nil
	case errors.Is(err, kazoo.ErrClaimLost):
		o.markLost()
		return false, partitionError(o.TP.Topic, o.TP.Partition,
			fmt.Errorf("commit of offset %d refused, partition lost to another claim: %w", next, err))
	case errors.As(err, &conflict) && o.inDoubt.Ours(conflict.Stored, conflict.Version):
		// An earlier commit whose reply was lost was applied after all.
		s.env.log().Debug("a commit whose reply was lost was applied", "topic", o.TP.Topic,
			"partition", o.TP.Partition, "next", conflict.Stored, "version", conflict.Version)
		o.adoptOwnWrite(conflict)
		return true, nil
	case errors.As(err, &conflict):
		return false, s.adoptConflict(o, next, conflict, err)
	default:
		// No answer: the write may or may not have been applied.
		o.inDoubt.Add(next, o.version)
		return false, partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("commit offset %d: %w", next, err))
	}
}

// RewindAsReset implements Store: it stores next, below the stored
// offset, the way a reset does (see kazoo's RewindOffsetFenced): fenced by
// o's claim, with an epoch bump that ends the claim, so the owner stops
// and claims again, and nothing under the old epoch commits any more. It
// does not apply to a partition tracked without a claim.
//
// It writes nothing while a seek is pending (a stored offset adopted from
// a conflict wins: ErrSeekPending) or after the claim was lost, and it
// recognises a commit of ours whose reply was lost, as commit does.
func (s *zookeeperStore) RewindAsReset(o *Partition, next int64) (applies bool, err error) {
	if o.Claim == nil {
		return false, nil
	}
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	for range 3 {
		switch {
		case o.lost.Load():
			return true, partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("rewind to %d: %w", next, kazoo.ErrClaimLost))
		case o.seeking.Load():
			return true, ErrSeekPending
		}
		err = s.env.deps.Registry.RewindOffsetFenced(o.Claim, next, o.version)
		var conflict *kazoo.OffsetConflictError
		switch {
		case err == nil, errors.Is(err, kazoo.ErrClaimLost):
			o.markLost() // our own reset ended the claim, or someone else did
			if err != nil {
				return true, partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("rewind to %d refused, partition lost to another claim: %w", next, err))
			}
			return true, nil
		case errors.As(err, &conflict) && o.inDoubt.Ours(conflict.Stored, conflict.Version):
			// A commit of ours whose reply was lost was applied after all.
			o.adoptOwnWrite(conflict)
			continue
		case errors.As(err, &conflict):
			s.adoptConflict(o, next, conflict, err)
			return true, ErrSeekPending
		default:
			return true, partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("rewind to %d: %w", next, err))
		}
	}
	return true, partitionError(o.TP.Topic, o.TP.Partition, fmt.Errorf("rewind to %d: %w", next, kazoo.ErrClaimContended))
}

// adoptOwnWrite takes a refused write's conflict as the applied write of
// ours in doubt it matches (see docs/in-doubt-commits.md). Called with
// o.commitMu held.
func (o *Partition) adoptOwnWrite(c *kazoo.OffsetConflictError) {
	o.version = c.Version
	o.inDoubt.Clear()
	o.Tracker.Committed(c.Stored)
}

// adoptConflict adopts the offset stored underneath (an operator's write)
// in place of next: pending marks are dropped and the owner seeks there
// (without an owner the tracker restarts there), and the conflict is
// counted, logged and reported; it returns the report. Called with
// o.commitMu held, by whichever write found the conflict.
func (s *zookeeperStore) adoptConflict(o *Partition, next int64, c *kazoo.OffsetConflictError, err error) *ConflictError {
	s.env.conflict()
	o.version = c.Version
	o.inDoubt.Clear()
	report := &ConflictError{Topic: o.TP.Topic, Partition: o.TP.Partition, Pending: next, Stored: c.Stored, Err: err}
	if o.owner != nil {
		o.seeking.Store(true)
		o.owner.CommitResult(CommitResult{Moved: true, Stored: c.Stored})
	} else {
		o.Tracker.Reset(c.Stored)
	}
	s.env.log().Warn("offset changed underneath; adopting it", "topic", o.TP.Topic, "partition", o.TP.Partition,
		"stored", c.Stored, "pending", next)
	s.env.report(partitionError(o.TP.Topic, o.TP.Partition, report))
	return report
}
