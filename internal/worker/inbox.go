package worker

import (
	"context"
	"sync"
	"sync/atomic"
)

// Inbox is a partition worker's one inbox: every message from outside its
// goroutine (stop, abandon, lost, seek{to}, pause) is posted here, and the
// worker takes them one at a time, most urgent first (see docs/worker.md
// for who posts what and where each is handled).
//
// Posting never blocks: the inbox is a set, not a queue. Each message is
// taken once; stop, abandon and lost are posted once for good, a newer
// seek replaces one not taken yet, and a pause may be posted again after
// it was taken.
//
// Waiting: wait returns a channel closed at the next post. Take it before
// checking for messages, and a post is never missed. The hot path of a
// worker checks only Pending.
type Inbox struct {
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

// Message is one message taken from the inbox: its event, and the target
// of a seek (negative: Offsets.Initial).
type Message struct {
	Event  Event
	SeekTo int64
}

// eventSet is a set of Events.
type eventSet uint16

func (s eventSet) has(e Event) bool { return s&(1<<e) != 0 }

// inboxPriority lists the messages in the order they are taken: what ends
// the most comes first, so a loss posted beside a stop skips the drain.
var inboxPriority = [...]Event{Loss, Abandon, Stop, Seek, Pause}

// NewInbox returns an empty inbox; cancel, if not nil, is called at the
// first stop, abandon and lost.
func NewInbox(cancel context.CancelFunc) *Inbox {
	return &Inbox{cancel: cancel}
}

// Pending reports whether a message is posted and not taken yet.
func (in *Inbox) Pending() bool { return in.pending.Load() }

// Stop posts a stop after a drain and a final commit.
func (in *Inbox) Stop() { in.postOnce(Stop) }

// Abandon posts a stop without the drain or the final commit (posted
// beside a stop).
func (in *Inbox) Abandon() { in.postOnce(Abandon) }

// Lost posts that the claim ended under the worker.
func (in *Inbox) Lost() { in.postOnce(Loss) }

// SeekTo posts a seek to offset (negative: Offsets.Initial).
func (in *Inbox) SeekTo(offset int64) {
	in.mu.Lock()
	in.seekTo = offset
	in.postLocked(Seek)
	in.mu.Unlock()
}

// Pause posts a pause of delivery. It may come again, and it does not end
// the worker's context.
func (in *Inbox) Pause() {
	in.mu.Lock()
	in.postLocked(Pause)
	in.mu.Unlock()
}

// postOnce posts e, a message that ends the worker's context; posting it
// again changes nothing.
func (in *Inbox) postOnce(e Event) {
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

func (in *Inbox) postLocked(e Event) {
	in.posted |= 1 << e
	in.unseen |= 1 << e
	in.pending.Store(true)
	if in.changed != nil {
		close(in.changed)
		in.changed = nil
	}
}

// Take returns the most urgent message not taken yet; ok is false when
// there is none.
func (in *Inbox) Take() (m Message, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, e := range inboxPriority {
		if in.unseen.has(e) {
			in.unseen &^= 1 << e
			in.pending.Store(in.unseen != 0)
			return Message{Event: e, SeekTo: in.seekTo}, true
		}
	}
	in.pending.Store(false)
	return Message{}, false
}

// Wait returns a channel closed at the next post.
func (in *Inbox) Wait() <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.changed == nil {
		in.changed = make(chan struct{})
	}
	return in.changed
}

// Has reports whether e was ever posted.
func (in *Inbox) Has(e Event) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.posted.has(e)
}
