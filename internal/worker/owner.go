package worker

import (
	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// What the worker is to the parties around it: the manage loop's
// coord.Worker, the committer's offsets.Owner, and a Sink's partition.

var (
	_ coord.Worker  = (*Worker)(nil)
	_ offsets.Owner = (*Worker)(nil)
)

// Partition returns the worker's partition.
func (w *Worker) Partition() TopicPartition { return w.tp }

// Done is closed once the worker has ended, and its fetch source with it.
func (w *Worker) Done() <-chan struct{} { return w.done }

// Claimed is closed once the partition is claimed, or the worker ended
// first.
func (w *Worker) Claimed() <-chan struct{} { return w.claimed }

// Opened is closed once the partition's first fetch source is open (its
// committed offset read, its first fetch under way), or the worker ended
// first.
func (w *Worker) Opened() <-chan struct{} { return w.opened }

// markOpened closes opened unless it is closed, and tells the fetch engine
// the partition is no longer expected to open. run's goroutine only.
func (w *Worker) markOpened() {
	select {
	case <-w.opened:
	default:
		close(w.opened)
		w.endOpenExpected()
	}
}

// endOpenExpected tells the fetch engine the partition is no longer
// expected to open (Fetch.ExpectOpen): it is open, or its worker is
// stopping. run's goroutine only.
func (w *Worker) endOpenExpected() {
	if w.openExpected != nil {
		w.openExpected()
		w.openExpected = nil
	}
}

// Claim returns the partition's claim: nil until Claimed is closed, and
// nil if the worker ended unclaimed. It is set once, before Claimed is
// closed, so a caller that waited for Claimed (or got the worker from a
// Sink's Open) reads it without a lock.
func (w *Worker) Claim() *kazoo.PartitionClaim {
	select {
	case <-w.claimed:
		return w.claim
	default:
		return nil
	}
}

// MayHoldNode reports whether an owner node of this instance's session may
// remain for the partition after the worker ended (a release or a
// clean-up that did not get through): the manage loop sweeps it (Sweep).
// Read it after Done.
func (w *Worker) MayHoldNode() bool { return w.mayHoldNode }

// Predecessor returns the partition's previous worker here that this one
// waits for before it claims (nil: none).
func (w *Worker) Predecessor() *Worker { return w.prev }

// CommitResult implements offsets.Owner: what a commit found comes to the
// worker's inbox, as a loss or a seek to the stored offset.
func (w *Worker) CommitResult(r offsets.CommitResult) {
	switch {
	case r.Lost:
		w.inbox.Lost()
	case r.Moved:
		w.inbox.SeekTo(r.Stored)
	}
}

// HighWaterMark implements offsets.Owner: the partition's high-water mark
// as its fetch sources last saw it (0: none yet).
func (w *Worker) HighWaterMark() int64 { return w.hwm.Load() }

// Await waits for ready. It returns false, early, when the worker's
// context ends (stop, abandon, loss, expiry). A Sink's Open waits with it.
func (w *Worker) Await(ready <-chan struct{}) bool {
	select {
	case <-ready:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// report hands err, about the worker's partition, to the application.
func (w *Worker) report(err error) {
	w.deps.ReportPartition(w.tp.Topic, w.tp.Partition, err)
}

// alignStores brings the stores that are behind the start offset up to it
// at once (see offsets.Store's Align): a start the store moved is
// committed before anything is delivered.
func (w *Worker) alignStores(owned *offsets.Partition, st offsets.Stored) {
	if w.deps.Offsets.Store().Align(owned, st) {
		w.commitStart(owned)
	}
}
