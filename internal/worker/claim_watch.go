package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// claimWatchRetry is how long the claim watch waits before asking again
// after ZooKeeper did not answer. Silence itself is the session fence's
// business; this only bounds how often the watch retries.
const claimWatchRetry = 200 * time.Millisecond

// watchClaim follows the worker's claim until stop is closed and stops the
// worker the moment the claim ends: the owner node deleted (by an operator,
// say), the epoch moved (another claim, a reset), or the epoch node created
// again. It relies on ZooKeeper watches, so the loss is noticed within one
// round trip of the change, whether or not the partition has anything to
// commit. A claim found lost marks the partition so nothing more is
// committed or delivered for it, and is reported on Errors() (wrapping
// kazoo.ErrClaimLost) unless our own session expired.
//
// stop is closed before the worker releases the claim itself, so its own
// release is never taken for a loss.
//
// Arming takes one of Deps.WatchSlots for its two reads. ZooKeeper answers
// a session's requests in order, and a rebalance that gains hundreds of
// partitions would otherwise send hundreds of arming reads at once: the
// claims still to come, and every gained partition's offset read, would
// wait behind all of them before the first message. A few at a time, the
// armings fill the gaps instead, later in a large rebalance. See
// docs/coordination.md, "Claim watches, a few at a time".
//
// A watch that fired on its node is checked again at once, without a
// slot: under a live claim only a claim or a reset moves the epoch, and
// only a release or the session's end deletes the owner node, so it is
// a loss, and delivery must stop within a round trip, not behind the
// armings of a rebalance. EventNotWatching (the session ended, every
// watch at once) and a failed read wait for a slot like a first arming.
func (w *Worker) watchClaim(pc *kazoo.PartitionClaim, owned *offsets.Partition, stop <-chan struct{}) {
	slot := true // this arming takes a slot
	for {
		if slot && !w.takeWatchSlot(stop) {
			return
		}
		// Both watches, not WatchClaim's merged channel: that costs a
		// goroutine per owned partition, beside this one.
		changed, err := w.deps.Registry.WatchClaimNodes(pc)
		if slot {
			w.giveWatchSlot()
		}
		select {
		case <-stop:
			return
		default:
		}
		switch {
		case errors.Is(err, kazoo.ErrClaimLost):
			owned.SetLost()
			w.lost()
			if w.deps.Session.SessionID() == pc.SessionID {
				// Not our own session's expiry (the manage loop handles
				// that for every partition at once): tell the application.
				w.report(fmt.Errorf("partition stopped: %w", err))
			}
			return
		case err != nil:
			t := time.NewTimer(claimWatchRetry)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
			slot = true
			continue
		}
		var ev kazoo.Event
		select {
		case <-stop:
			return
		case ev = <-changed.Epoch:
		case ev = <-changed.Owner:
		}
		slot = ev.Type == kazoo.EventNotWatching
	}
}

// watchSlots is how many claim watches an instance arms at once (see
// watchClaim): enough to keep the arming reads pipelined, few enough that a
// claim or an offset read waits behind a handful of them at most.
const watchSlots = 4

// NewWatchSlots returns the slots an instance's workers share as
// Deps.WatchSlots.
func NewWatchSlots() chan struct{} { return make(chan struct{}, watchSlots) }

// takeWatchSlot waits for one of Deps.WatchSlots (at once when there are
// none). It returns false when stop is closed first.
func (w *Worker) takeWatchSlot(stop <-chan struct{}) bool {
	if w.deps.WatchSlots == nil {
		return true
	}
	select {
	case w.deps.WatchSlots <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

// giveWatchSlot gives back the slot takeWatchSlot took.
func (w *Worker) giveWatchSlot() {
	if w.deps.WatchSlots != nil {
		<-w.deps.WatchSlots
	}
}
