package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// Giving an owner node up. An owner node that outlives its worker leaves
// the partition unowned while this instance's session lives, so every way
// a worker ends deletes it (release, releaseIfOurs) or marks it
// (mayHoldNode) for the manage loop's sweep. releaseIfOurs runs only while
// no newer claim of ours on the partition can exist (successors and
// sweeps wait for each other), and its calls are never abandoned. Every
// case, and the bound, are in docs/owner-release.md.

// release is state releasing: give the claim up as worker.ReleaseFor says.
func (w *partitionWorker) release() worker.Event {
	runBeforeRelease(w)
	pc := w.claim
	sess, _ := w.cg.kazoo.Session()
	kind := worker.ReleaseFor(pc.SessionID, sess.ID, sess.Status == kazoo.SessionClosed, w.claimLost())
	switch kind {
	case worker.ReleaseNothing:
		w.log.Info("stopped; the session holding the claim is gone, nothing to release")
		return worker.Finished
	case worker.ReleaseOwnerNode:
		err := w.cg.claimer.Release(context.Background(), pc)
		if err == nil {
			w.log.Info("released")
			return worker.Finished
		}
		// Refused (the epoch moved since the final commit: a reset) or
		// not through in time: the node may still be ours.
		w.log.Info("the fenced release failed; deleting the owner node if it is still ours", "err", err)
	}
	if err := w.cg.releaseIfOurs(pc); err != nil {
		w.mayHoldNode = true
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("release: %w", err))
		return worker.Failed
	}
	w.log.Info("stopped; the claim had moved on, its owner node is gone")
	return worker.Finished
}

// cleanUpInDoubtClaim deletes the owner node a stopped claim may have
// created under the current session (see claim.ErrStoppedInDoubt).
func (w *partitionWorker) cleanUpInDoubtClaim() {
	s, _ := w.cg.kazoo.Session()
	if s.Status == kazoo.SessionClosed || s.ID == 0 {
		return // closing: the session's end deletes every node of ours
	}
	pc := &kazoo.PartitionClaim{Topic: w.tp.Topic, Partition: w.tp.Partition, InstanceID: w.cg.instance.ID, SessionID: s.ID}
	if err := w.cg.releaseIfOurs(pc); err != nil {
		w.mayHoldNode = true
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("clean up a claim stopped in doubt: %w", err))
		return
	}
	w.log.Info("stopped while a claim was in doubt; no owner node of ours is left")
}

// releaseIfOurs deletes pc's owner node if it still holds pc's instance
// under pc's session (kazoo's ReleaseAfterLoss), retrying while
// ZooKeeper's answer is in doubt, until the node is gone or not ours, or
// pc's session has ended (and the node with it).
func (cg *ConsumerGroup) releaseIfOurs(pc *kazoo.PartitionClaim) error {
	wait := cg.config.Claim.InitialInterval
	for {
		err := cg.instance.ReleaseAfterLoss(pc)
		if err == nil || !kazoo.IsRetryable(err) {
			return err
		}
		if sessionEnded(cg.kazoo, pc.SessionID) {
			return nil
		}
		cg.log.Debug("deleting an owner node of ours failed; trying again", "topic", pc.Topic, "partition", pc.Partition, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-cg.closeExpired: // the session is closed next, and the node with it
			t.Stop()
			return nil
		}
		wait = min(2*wait, cg.config.Claim.MaxInterval, cg.kazoo.SessionTimeout()/4)
	}
}

// wakeForSweep wakes the manage loop after a worker ended that may have
// left an owner node, so the sweep runs at once rather than at the next
// resync.
func (cg *ConsumerGroup) wakeForSweep() {
	select {
	case cg.sweepWake <- struct{}{}:
	default:
	}
}

// sessionEnded reports whether session id is over for good (expired,
// replaced or closed), and every ephemeral node it held with it.
func sessionEnded(kz *kazoo.Kazoo, id int64) bool {
	s, _ := kz.Session()
	return s.ID != id || s.Status == kazoo.SessionExpired || s.Status == kazoo.SessionClosed
}

// sweepOwnerNode starts a sweeper for tp: a stand-in worker, kept among the
// stopping ones so that a worker started for tp meanwhile waits for it,
// which deletes an owner node of this instance's current session left for
// tp by an earlier worker (see mayHoldNode).
func (cg *ConsumerGroup) sweepOwnerNode(tp topicPartition) *partitionWorker {
	w := newWorker(cg, tp)
	close(w.claimed) // it never claims
	go func() {
		defer close(w.done)
		defer w.cancel()
		s, _ := cg.kazoo.Session()
		if s.Status != kazoo.SessionConnected {
			w.mayHoldNode = s.Status != kazoo.SessionClosed // the next pass looks again
			return
		}
		pc := &kazoo.PartitionClaim{Topic: tp.Topic, Partition: tp.Partition, InstanceID: cg.instance.ID, SessionID: s.ID}
		if err := cg.releaseIfOurs(pc); err != nil {
			w.mayHoldNode = !errors.Is(err, kazoo.ErrClosing)
			cg.reportPartition(tp.Topic, tp.Partition, fmt.Errorf("delete an owner node left behind: %w", err))
		}
	}()
	return w
}
