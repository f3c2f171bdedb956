package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/internal/offsets"
)

// A claimed partition without a stored offset starts at Offsets.Initial.
// That position is resolved to a real offset (the partition's oldest or
// newest offset, asked of its leader) before the first fetch, consumed from
// exactly there, and written to ZooKeeper at once, fenced by the claim, as
// Kafka's own ZooKeeper consumer did. So every claimed partition has an
// offset node, whether or not anything was ever marked in it: monitors that
// read the offset nodes of partitions 0..n-1 by count (Burrow does) see
// every partition, and a partition never consumed shows its real lag
// instead of none. The same holds after an out-of-range reset: the new
// position is written as soon as it is resolved.
//
// The resolved position is the first offset delivered, so committing it
// never skips a message. It is stored before anything is delivered from
// it: a failed write is retried, and nothing is handed out until it
// succeeds. Otherwise an owner that died before its first commit would
// let the next owner resolve Offsets.Initial again, and with
// OffsetNewest the messages in between would never be delivered. The
// first write creates the node, so it fails with a conflict if anybody
// wrote one meanwhile; the stored offset is adopted then, as for any
// conflict.

// startAtInitial resolves Offsets.Initial for a partition that has no stored
// position, makes it the partition's uncommitted position and commits it.
// Errors resolving it are reported and retried every Claim.RetryCooldown;
// ok is false when the worker stopped or lost its claim meanwhile.
//
// A topic just created has no leaders for a moment, so the first retries
// come quickly: the wait starts at Claim.InitialInterval and doubles up to
// Claim.RetryCooldown, and failures are reported once they have lasted
// startReportAfter.
func (w *Worker) startAtInitial(owned *offsets.Partition) (start int64, ok bool) {
	first := time.Now()
	start, err := backoff.RetryNotifyWithData(w.resolveInitial,
		backoff.WithContext(w.retryBackOff(w.cfg.RetryCooldown), w.ctx),
		func(err error, _ time.Duration) {
			if time.Since(first) >= startReportAfter {
				w.report(fmt.Errorf("resolve the start offset (%s, Offsets.Initial): %w", offsetName(w.cfg.Initial), err))
			}
		})
	if err != nil {
		return 0, false // the worker's context ended: every error is retried
	}
	owned.RestartUncommitted(start)
	return start, w.commitStart(owned)
}

// startReportAfter is how long resolving a start offset may fail before the
// failures are reported: longer than a new topic takes to get its leaders.
const startReportAfter = 2 * time.Second

// resolveInitial asks the partition's leader for the offset Offsets.Initial
// names.
func (w *Worker) resolveInitial() (int64, error) {
	return offsets.UntilClosing(w.deps.Stopping, func() (int64, error) {
		return w.deps.InitialOffset(w.tp.Topic, w.tp.Partition)
	})
}

// commitStart stores a position set by restartUncommitted before anything
// is delivered from it, trying again (on a backoff from
// Claim.InitialInterval up to Claim.RetryCooldown, each failure reported)
// until it is stored. A conflict or a lost claim is resolved by commit
// itself: the worker takes the seek or the loss before its first
// delivery. It returns false when the worker's context ended first (stop,
// abandon, loss, expiry).
func (w *Worker) commitStart(owned *offsets.Partition) bool {
	stored, err := backoff.RetryWithData(func() (bool, error) {
		err := w.deps.Offsets.Commit(owned)
		var conflict *offsets.ConflictError
		switch {
		case owned.Lost():
			return false, nil // the loss event ends the worker
		case errors.As(err, &conflict) || owned.Seeking():
			return true, nil // commit reported it; the seek is taken first
		case err != nil:
			w.deps.Report(err)
			return false, err
		}
		if _, dirty, ok := owned.PendingOutsideRecall(); !ok || dirty {
			return false, errStartPending
		}
		return true, nil
	}, backoff.WithContext(w.retryBackOff(w.cfg.RetryCooldown), w.ctx))
	return err == nil && stored
}

// errStartPending: a commit of the start returned without storing it (a
// recall ran meanwhile, or the store had nothing to write): try again.
var errStartPending = errors.New("the start offset is not stored yet")
