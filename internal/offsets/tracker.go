package offsets

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Tracker follows the offsets of one owned partition for the commit
// loop. All offsets it stores are "next" offsets, as ZooKeeper stores them:
// the offset of the next message to consume. A negative next offset means
// "none stored" (a partition the group never committed).
//
// Three parties use it:
//   - the partition's worker calls Delivered after each message handed to
//     the application;
//   - the application, through CommitUpto (or a session's MarkMessage and
//     MarkOffset), calls MarkOffset, and through a session's ResetOffset,
//     Rewind;
//   - the commit loop calls Pending, commits, then Committed; it calls Reset
//     after an offset conflict or a seek. Committed and Reset are called by
//     that one goroutine only, so a commit in flight never races a reset.
//
// Its state is guarded by one mutex it owns; waiters are woken through a
// channel that is closed and replaced on every change. LowerCeiling and
// RestartAtMark keep a commit below a message taken back from the
// partition's buffer: see docs/recall.md.
type Tracker struct {
	mu        sync.Mutex
	next      int64 // highest marked offset + 1, or the start offset
	committed int64 // next offset last stored in ZooKeeper
	// delivered is the highest offset delivered since the start or the last
	// Reset or Rewind (-1: none). Delivered, called by the partition's
	// worker only, needs no lock; a Rewind from the application may clear
	// it meanwhile, and a delivery after that is outstanding, as it should
	// be. A drain reads it once the worker stopped delivering.
	delivered atomic.Int64
	rewound   bool          // Rewind moved next below committed: commit it although it is lower
	ceiling   int64         // Pending never returns more (-1: none); see LowerCeiling
	changed   chan struct{} // made by a waiter; closed (and dropped) at the next change
	gen       atomic.Uint64 // bumped by Reset (under mu): marks judged before a Reset are refused
	writes    atomic.Uint64 // counts Committed calls: each is a write to a store
}

// NewTracker returns a tracker for a partition whose stored next offset is
// committed (negative if none is stored).
func NewTracker(committed int64) *Tracker {
	t := &Tracker{next: committed, committed: committed, ceiling: -1}
	t.delivered.Store(-1)
	return t
}

// notifyLocked wakes every waiter. The caller holds mu.
// The channel exists only while someone waits, so the hot path (a mark or a
// delivery per message) allocates nothing.
func (t *Tracker) notifyLocked() {
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// waitChanLocked returns a channel closed at the next change. The caller
// holds mu.
func (t *Tracker) waitChanLocked() chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// MarkOffset records that the message at offset has been processed, as
// upstream's CommitUpto does: the next offset to commit becomes offset+1.
// Marks only move forward: a mark at or below an earlier one (or below the
// start or reset position), and a negative offset, change nothing and return
// false, so the caller can report them.
func (t *Tracker) MarkOffset(offset int64) bool {
	return t.MarkOffsetAt(offset, t.gen.Load())
}

// Generation returns the current position generation; Reset moves it.
func (t *Tracker) Generation() uint64 {
	return t.gen.Load()
}

// MarkOffsetAt is MarkOffset for a mark judged valid at generation gen: it
// is refused if a Reset happened since, so a mark of a message delivered
// before a seek can never move the new position.
func (t *Tracker) MarkOffsetAt(offset int64, gen uint64) bool {
	if offset < 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen.Load() != gen || offset+1 <= t.next {
		return false
	}
	t.next = offset + 1
	t.notifyLocked()
	return true
}

// Delivered records that the message at offset was handed to the
// application. Drain waits until every delivered message is marked.
// Called by the partition's worker only.
func (t *Tracker) Delivered(offset int64) {
	if offset > t.delivered.Load() {
		t.delivered.Store(offset)
	}
}

// LastDelivered returns the highest offset delivered since the start or
// the last Reset, Rewind or RestartAtMark (-1: none).
func (t *Tracker) LastDelivered() int64 {
	return t.delivered.Load()
}

// Pending returns the next offset to commit and whether it differs from the
// last committed one (dirty). A partition with nothing marked and nothing
// stored is never dirty.
func (t *Tracker) Pending() (next int64, dirty bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next = t.next
	if t.ceiling >= 0 && next > t.ceiling {
		next = t.ceiling
	}
	return next, next >= 0 && (next > t.committed || t.rewound && next != t.committed)
}

// Committed records that next was stored in ZooKeeper. A value at or below
// the last committed one is ignored: committed offsets only move forward,
// except through Reset, and through Rewind: after a Rewind every commit is
// recorded as it was written, until one writes the position as it is.
func (t *Tracker) Committed(next int64) {
	t.writes.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rewound {
		t.committed = next
		t.rewound = next != t.next
		t.notifyLocked()
		return
	}
	if next > t.committed {
		t.committed = next
		t.notifyLocked()
	}
}

// Writes counts the stores' writes Committed recorded.
func (t *Tracker) Writes() uint64 { return t.writes.Load() }

// Rewind moves the position back to to, as sarama's ResetOffset does: the
// next commit stores to even though it is lower than what is stored, and
// later marks move it forward again as usual (a mark at or above to
// undoes the rewind). Deliveries so far are forgotten: a rewind declares
// them unprocessed, so Drain does not wait for their marks; the next owner
// delivers them again. It is refused (false) for a negative to, or one above
// the current position; consumption itself does not move.
func (t *Tracker) Rewind(to int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if to < 0 || to > t.next {
		return false
	}
	t.next = to
	t.rewound = true // also when to is what is stored: a commit in flight may store more
	t.delivered.Store(-1)
	t.notifyLocked()
	return true
}

// Reset makes to both the next and the committed offset, dropping pending
// marks and forgetting deliveries: consumption resumes at to (after an offset
// conflict, the stored offset; after a seek, the new position). Later marks
// below to are ignored. Waiters in Drain return, since nothing delivered from
// the new position is outstanding.
func (t *Tracker) Reset(to int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next, t.committed = to, to
	t.rewound = false
	t.ceiling = -1
	t.gen.Add(1)
	t.delivered.Store(-1)
	t.notifyLocked()
}

// quiescentLocked reports whether every delivered message is marked. The
// caller holds mu.
func (t *Tracker) quiescentLocked() bool {
	d := t.delivered.Load()
	return d < 0 || t.next > d || t.ceiling >= 0 && t.next >= t.ceiling
}

// Drain waits until every message delivered so far is marked, as upstream's
// FinalizePartition waits for the last delivered offset to be processed.
// It returns nil once that holds (at once if it already does), or, when ctx
// ends first, an error wrapping ctx.Err() that names the outstanding offsets.
// The caller bounds ctx by Offsets.ProcessingTimeout.
func (t *Tracker) Drain(ctx context.Context) error {
	for {
		settled, changed := t.Settled()
		if settled {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			err := t.Unsettled(ctx.Err())
			if cause := context.Cause(ctx); err != nil && cause != ctx.Err() {
				err = fmt.Errorf("%w (%w)", err, cause)
			}
			return err
		}
	}
}

// Settled reports whether every message delivered so far is marked; when
// not, changed is closed at the tracker's next change. A worker's drain
// selects on it beside its other events.
func (t *Tracker) Settled() (settled bool, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.quiescentLocked() {
		return true, nil
	}
	return false, t.waitChanLocked()
}

// Unsettled returns nil when every delivered message is marked (a mark
// that raced a deadline still counts), or else an error naming the
// outstanding offsets that wraps why the wait for them ended.
func (t *Tracker) Unsettled(why error) error {
	t.mu.Lock()
	ok, next, delivered := t.quiescentLocked(), t.next, t.delivered.Load()
	t.mu.Unlock()
	if ok {
		return nil
	}
	// The prefix names the package whose users see the error.
	return fmt.Errorf("consumergroup: gave up waiting for offsets %d..%d to be marked: %w", max(next, 0), delivered, why)
}

// RestartAtMark starts a new generation at the current position, lowered
// to ceiling if that is lower (negative: no ceiling), and returns it:
// deliveries so far are forgotten and marks judged before it are refused,
// while the committed offset stays as it is. Consumption resumes at the
// returned offset: every message not marked yet is delivered again.
//
// The ceiling is the lowest offset the application never got. Messages
// are processed in the order they were delivered, so a mark above it
// (of a message delivered after one that was taken back) cannot mean the
// one below was processed.
func (t *Tracker) RestartAtMark(ceiling int64) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ceiling >= 0 && (ceiling < 0 || t.ceiling < ceiling) {
		ceiling = t.ceiling // a lower cap set before (another take-back) still holds
	}
	if ceiling >= 0 && t.next > ceiling {
		t.next = ceiling
	}
	t.ceiling = -1
	t.gen.Add(1)
	t.delivered.Store(-1)
	t.notifyLocked()
	return t.next
}

// TakeBackDelivered says the messages delivered after last, up to and
// including the last delivered, were taken back before the application
// got them: when the last delivered is still was (nothing delivered
// since), it becomes last, so a drain waits only for the marks of what
// the application got. Called by the partition's worker while it
// delivers nothing.
func (t *Tracker) TakeBackDelivered(was, last int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.delivered.CompareAndSwap(was, last) {
		t.notifyLocked()
	}
}

// LowerCeiling caps what Pending returns at ceiling, the lowest offset the
// application never got, until the next Reset: a mark above it (of a
// message delivered after one that was taken back) is never committed.
// Drain stops waiting once the position reaches it. A lower ceiling set
// before (by another take-back) stays.
func (t *Tracker) LowerCeiling(ceiling int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ceiling < 0 || ceiling < t.ceiling {
		t.ceiling = ceiling
		t.notifyLocked()
	}
}

// ResetUncommitted is Reset to a position that is not stored yet: to must
// be written to ZooKeeper (a start offset resolved from Offsets.Initial, or
// the position after an out-of-range reset). Pending reports it dirty until
// Committed records a commit at or above it, so the position is committed
// even when nothing is ever marked; a mark above it moves it forward as
// usual.
func (t *Tracker) ResetUncommitted(to int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next, t.committed = to, -1
	t.ceiling = -1
	t.gen.Add(1)
	t.delivered.Store(-1)
	t.notifyLocked()
}

// CommittedOffset returns the next offset last committed (negative: none).
func (t *Tracker) CommittedOffset() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.committed
}

// TestLocker returns the mutex that guards the tracker, for tests that
// force an interleaving with a call that takes it. Production code never
// takes it.
func (t *Tracker) TestLocker() sync.Locker {
	return &t.mu
}
