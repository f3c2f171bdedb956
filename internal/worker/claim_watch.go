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
func (w *Worker) watchClaim(pc *kazoo.PartitionClaim, owned *offsets.Partition, stop <-chan struct{}) {
	for {
		// Both watches, not WatchClaim's merged channel: that costs a
		// goroutine per owned partition, beside this one.
		changed, err := w.deps.Registry.WatchClaimNodes(pc)
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
			continue
		}
		select {
		case <-stop:
			return
		case <-changed.Epoch:
		case <-changed.Owner:
		}
	}
}
