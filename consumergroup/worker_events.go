package consumergroup

import (
	"context"
	"sync"
	"sync/atomic"
)

// workerEvents is the one source of a worker's outside events: stop,
// abandon, loss, seek, expiry and pause (see the table in worker_lifecycle.go).
// Whoever raises one (the manage loop, the claim watch, the offset
// manager, the worker itself) calls raise; the worker takes them, one at a
// time and most urgent first, whenever its current state can act on one.
//
// Each event is taken once. Stop, abandon, loss and expiry stay raised for
// good (raised reports them); a seek is taken with its target, and a newer
// seek replaces one not taken yet; a pause may be raised again after it
// was taken.
//
// Waiting: wait returns a channel closed at the next raise. Take it before
// checking for events, and a raise is never missed. The hot path of a
// worker checks only the pending flag.
type workerEvents struct {
	pending atomic.Bool // an event is raised and not taken yet

	mu      sync.Mutex
	raised  eventSet      // every event raised so far
	unseen  eventSet      // raised and not taken yet
	seekTo  int64         // the target of the seek not taken yet
	changed chan struct{} // closed at the next raise; nil while nobody waits

	// cancel ends the worker's context: at stop, abandon, loss and expiry,
	// so blocking calls that take it (the claim loop, offset reads,
	// fetches) end with them.
	cancel context.CancelFunc
}

// eventSet is a set of workerEvents.
type eventSet uint8

func (s eventSet) has(e workerEvent) bool { return s&(1<<e) != 0 }

// eventPriority lists the events in the order they are taken: what ends
// the most comes first, so a loss raised beside a stop skips the drain.
var eventPriority = [...]workerEvent{eventLoss, eventExpiry, eventAbandon, eventStop, eventSeek, eventPause}

func newWorkerEvents(cancel context.CancelFunc) *workerEvents {
	return &workerEvents{cancel: cancel}
}

// raise raises e (not eventSeek or eventPause: see raiseSeek and
// raisePause). Raising an event again changes nothing.
func (ev *workerEvents) raise(e workerEvent) {
	ev.mu.Lock()
	if ev.raised.has(e) {
		ev.mu.Unlock()
		return
	}
	ev.raised |= 1 << e
	ev.unseen |= 1 << e
	ev.wakeLocked()
	ev.mu.Unlock()
	if ev.cancel != nil {
		ev.cancel()
	}
}

// raiseSeek raises a seek to offset (negative: Offsets.Initial).
func (ev *workerEvents) raiseSeek(offset int64) {
	ev.mu.Lock()
	ev.raised |= 1 << eventSeek
	ev.unseen |= 1 << eventSeek
	ev.seekTo = offset
	ev.wakeLocked()
	ev.mu.Unlock()
}

// raisePause raises a pause of delivery. Unlike the events above it may
// come again, and it does not end the worker's context.
func (ev *workerEvents) raisePause() {
	ev.mu.Lock()
	ev.raised |= 1 << eventPause
	ev.unseen |= 1 << eventPause
	ev.wakeLocked()
	ev.mu.Unlock()
}

func (ev *workerEvents) wakeLocked() {
	ev.pending.Store(true)
	if ev.changed != nil {
		close(ev.changed)
		ev.changed = nil
	}
}

// take returns the most urgent event not taken yet, with the seek's target
// for a seek; ok is false when there is none.
func (ev *workerEvents) take() (e workerEvent, seekTo int64, ok bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range eventPriority {
		if ev.unseen.has(e) {
			ev.unseen &^= 1 << e
			ev.pending.Store(ev.unseen != 0)
			return e, ev.seekTo, true
		}
	}
	ev.pending.Store(false)
	return 0, 0, false
}

// wait returns a channel closed at the next raise.
func (ev *workerEvents) wait() <-chan struct{} {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.changed == nil {
		ev.changed = make(chan struct{})
	}
	return ev.changed
}

// has reports whether e was ever raised.
func (ev *workerEvents) has(e workerEvent) bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.raised.has(e)
}
