package consumergroup

import (
	"context"
	"sync"
	"sync/atomic"
)

// inbox is a worker's one inbox: every message from outside its goroutine
// (stop, abandon, lost, seek{to}, pause) is posted here, and the worker
// takes them one at a time, most urgent first, and hands each to handle
// (see docs/worker.md for who posts what).
//
// Posting never blocks: the inbox is a set, not a queue. Each message is
// taken once; stop, abandon and lost are posted once for good, a newer
// seek replaces one not taken yet, and a pause may be posted again after
// it was taken.
//
// Waiting: wait returns a channel closed at the next post. Take it before
// checking for messages, and a post is never missed. The hot path of a
// worker checks only pending.
type inbox struct {
	pending atomic.Bool // a message is posted and not taken yet

	mu      sync.Mutex
	posted  eventSet      // every message posted so far
	unseen  eventSet      // posted and not taken yet
	seekTo  int64         // the target of the seek not taken yet
	changed chan struct{} // closed at the next post; nil while nobody waits

	// cancel ends the worker's context at stop, abandon and lost, so
	// blocking calls that take it (the claim loop, offset reads, fetches)
	// end with them.
	cancel context.CancelFunc
}

// message is one message taken from the inbox: its event, and the target
// of a seek.
type message struct {
	event  workerEvent
	seekTo int64
}

// eventSet is a set of workerEvents.
type eventSet uint16

func (s eventSet) has(e workerEvent) bool { return s&(1<<e) != 0 }

// inboxPriority lists the messages in the order they are taken: what ends
// the most comes first, so a loss posted beside a stop skips the drain.
var inboxPriority = [...]workerEvent{eventLoss, eventAbandon, eventStop, eventSeek, eventPause}

func newInbox(cancel context.CancelFunc) *inbox {
	return &inbox{cancel: cancel}
}

// stop posts a stop after a drain and a final commit.
func (in *inbox) stop() { in.postOnce(eventStop) }

// abandon posts a stop without the drain or the final commit (posted
// beside a stop).
func (in *inbox) abandon() { in.postOnce(eventAbandon) }

// lost posts that the claim ended under the worker.
func (in *inbox) lost() { in.postOnce(eventLoss) }

// seek posts a seek to offset (negative: Offsets.Initial).
func (in *inbox) seek(offset int64) {
	in.mu.Lock()
	in.seekTo = offset
	in.postLocked(eventSeek)
	in.mu.Unlock()
}

// pause posts a pause of delivery. It may come again, and it does not end
// the worker's context.
func (in *inbox) pause() {
	in.mu.Lock()
	in.postLocked(eventPause)
	in.mu.Unlock()
}

// postOnce posts e, a message that ends the worker's context; posting it
// again changes nothing.
func (in *inbox) postOnce(e workerEvent) {
	in.mu.Lock()
	if in.posted.has(e) {
		in.mu.Unlock()
		return
	}
	in.postLocked(e)
	in.mu.Unlock()
	if in.cancel != nil {
		in.cancel()
	}
}

func (in *inbox) postLocked(e workerEvent) {
	in.posted |= 1 << e
	in.unseen |= 1 << e
	in.pending.Store(true)
	if in.changed != nil {
		close(in.changed)
		in.changed = nil
	}
}

// take returns the most urgent message not taken yet; ok is false when
// there is none.
func (in *inbox) take() (m message, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, e := range inboxPriority {
		if in.unseen.has(e) {
			in.unseen &^= 1 << e
			in.pending.Store(in.unseen != 0)
			return message{event: e, seekTo: in.seekTo}, true
		}
	}
	in.pending.Store(false)
	return message{}, false
}

// wait returns a channel closed at the next post.
func (in *inbox) wait() <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.changed == nil {
		in.changed = make(chan struct{})
	}
	return in.changed
}

// has reports whether e was ever posted.
func (in *inbox) has(e workerEvent) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.posted.has(e)
}
