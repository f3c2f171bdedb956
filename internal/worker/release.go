package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

// Giving an owner node up. An owner node that outlives its worker leaves
// the partition unowned while this instance's session lives, so every way
// a worker ends deletes it (release, releaseIfOurs) or marks it
// (mayHoldNode) for the manage loop's sweep. releaseIfOurs runs only while
// no newer claim of ours on the partition can exist (successors and
// sweeps wait for each other), and its calls are never abandoned. Every
// case, and the bound, are in docs/owner-release.md.

// release is state releasing: give the claim up as ReleaseFor says.
func (w *Worker) release() Event {
	if w.deps.BeforeRelease != nil {
		w.deps.BeforeRelease(w)
	}
	pc := w.claim
	sess, _ := w.deps.Session.Session()
	kind := ReleaseFor(pc.SessionID, sess.ID, sess.Status == kazoo.SessionClosed, w.claimLost())
	switch kind {
	case ReleaseNothing:
		w.log.Info("stopped; the session holding the claim is gone, nothing to release")
		return Finished
	case ReleaseOwnerNode:
		err := w.deps.Claimer.Release(context.Background(), pc)
		if err == nil {
			w.log.Info("released")
			return Finished
		}
		// Refused (the epoch moved since the final commit: a reset) or
		// not through in time: the node may still be ours.
		w.log.Info("the fenced release failed; deleting the owner node if it is still ours", "err", err)
	}
	if err := w.releaseIfOurs(pc); err != nil {
		w.mayHoldNode = true
		w.report(fmt.Errorf("release: %w", err))
		return Failed
	}
	w.log.Info("stopped; the claim had moved on, its owner node is gone")
	return Finished
}

// cleanUpInDoubtClaim deletes the owner node a stopped claim may have
// created under the current session (see claim.ErrStoppedInDoubt).
func (w *Worker) cleanUpInDoubtClaim() {
	s, _ := w.deps.Session.Session()
	if s.Status == kazoo.SessionClosed || s.ID == 0 {
		return // closing: the session's end deletes every node of ours
	}
	pc := &kazoo.PartitionClaim{Topic: w.tp.Topic, Partition: w.tp.Partition, InstanceID: w.cfg.InstanceID, SessionID: s.ID}
	if err := w.releaseIfOurs(pc); err != nil {
		w.mayHoldNode = true
		w.report(fmt.Errorf("clean up a claim stopped in doubt: %w", err))
		return
	}
	w.log.Info("stopped while a claim was in doubt; no owner node of ours is left")
}

// releaseIfOurs deletes pc's owner node if it still holds pc's instance
// under pc's session (kazoo's ReleaseAfterLoss), retrying while
// ZooKeeper's answer is in doubt, until the node is gone or not ours, or
// pc's session has ended (and the node with it).
func (w *Worker) releaseIfOurs(pc *kazoo.PartitionClaim) error {
	closing, cancel := untilClosed(w.deps.Closing)
	defer cancel()
	// Waits never outlast a quarter of the session timeout; the session
	// is pc's for as long as this runs (its end ends the retries).
	waits := w.retryBackOff(min(w.cfg.MaxInterval, w.deps.Session.SessionTimeout()/4))
	err := backoff.RetryNotify(func() error {
		err := w.deps.Registry.ReleaseAfterLoss(pc)
		switch {
		case err == nil:
			return nil
		case !kazoo.IsRetryable(err):
			return backoff.Permanent(err)
		case w.sessionEnded(pc.SessionID):
			return nil // the node ended with the session
		}
		return err
	}, backoff.WithContext(waits, closing), func(err error, _ time.Duration) {
		w.log.Debug("deleting an owner node of ours failed; trying again", "err", err)
	})
	if errors.Is(err, context.Canceled) && closing.Err() != nil {
		return nil // Close: the session is closed next, and the node with it
	}
	return err
}

// sessionEnded reports whether session id is over for good (expired,
// replaced or closed), and every ephemeral node it held with it.
func (w *Worker) sessionEnded(id int64) bool {
	s, _ := w.deps.Session.Session()
	return s.ID != id || s.Status == kazoo.SessionExpired || s.Status == kazoo.SessionClosed
}

// Sweep starts a sweeper for tp: a stand-in worker, kept among the
// stopping ones so that a worker started for tp meanwhile waits for it,
// which deletes an owner node of this instance's current session left for
// tp by an earlier worker (see MayHoldNode).
func Sweep(cfg Config, deps Deps, tp TopicPartition) *Worker {
	w := New(cfg, deps, tp)
	close(w.claimed) // it never claims
	close(w.opened)  // nor opens
	go func() {
		defer close(w.done)
		defer w.cancel()
		s, _ := deps.Session.Session()
		if s.Status != kazoo.SessionConnected {
			w.mayHoldNode = s.Status != kazoo.SessionClosed // the next pass looks again
			return
		}
		pc := &kazoo.PartitionClaim{Topic: tp.Topic, Partition: tp.Partition, InstanceID: cfg.InstanceID, SessionID: s.ID}
		if err := w.releaseIfOurs(pc); err != nil {
			w.mayHoldNode = !errors.Is(err, kazoo.ErrClosing)
			w.report(fmt.Errorf("delete an owner node left behind: %w", err))
		}
	}()
	return w
}
