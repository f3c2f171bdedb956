package offsets

import (
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// maxRedeliveryWindow bounds how many redelivered messages a partition
// remembers after a backward seek (see Redelivery).
const maxRedeliveryWindow = 1 << 16

// Redelivery tells a mark of a message delivered before a backward seek
// from a mark of its redelivery at the same offset.
//
// Contract: the owner calls Restart each time the partition moves to a new
// position, Offered for each message about to be handed to the
// application, and Allows before it lets a mark count. While no window is
// open, Offered and Allows cost one atomic load. Safe for concurrent use.
//
// Why: a seek backwards (an operator's rewind, adopted as an offset
// conflict) moves a partition from far to a lower offset from; offsets in
// [from, far] are then delivered twice, once before the seek and once
// after. An application may mark a message it received before the seek
// late, after the redelivery has passed its offset: judged by offset alone
// it would be accepted, and a commit of it would skip the part of the
// rewind not yet processed. So while the window is open each redelivered
// message of the window is remembered, and a mark in the window counts
// only if it names that very message. Marks above far name messages
// delivered only after the seek; marks below from are the Tracker's to
// judge. A mark by offset only cannot name a message and is refused inside
// the window.
//
// The window closes once marks pass far. At most 65536 offsets are
// remembered; marks in the rest of a larger window are refused until a
// mark above it arrives.
type Redelivery struct {
	open atomic.Bool // fast path: false while no window is open

	mu       sync.Mutex
	from, to int64 // the window [from, to], while open
	msgs     map[int64]*sarama.ConsumerMessage
}

// Restart opens the window [from, far] after the partition moved to from,
// when far, the highest offset delivered before the move, is at or above
// from; otherwise it closes any window.
func (r *Redelivery) Restart(from, far int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from < 0 || far < from {
		r.close()
		return
	}
	r.from, r.to = from, far
	r.msgs = make(map[int64]*sarama.ConsumerMessage)
	r.open.Store(true)
}

// Offered records m, about to be handed to the application.
func (r *Redelivery) Offered(m *sarama.ConsumerMessage) {
	if !r.open.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open.Load() && m.Offset >= r.from && m.Offset <= r.to && m.Offset-r.from < maxRedeliveryWindow {
		r.msgs[m.Offset] = m
	}
}

// Allows reports whether a mark of m at offset (m nil: a mark by offset
// only) may count, and forgets what a counted mark covers.
func (r *Redelivery) Allows(m *sarama.ConsumerMessage, offset int64) bool {
	if !r.open.Load() {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.open.Load() || offset > r.to {
		if r.open.Load() {
			r.close()
		}
		return true
	}
	if offset < r.from {
		return true // below the window: the tracker judges it
	}
	if m == nil || r.msgs[offset] != m {
		return false
	}
	for o := r.from; o <= offset; o++ {
		delete(r.msgs, o)
	}
	r.from = offset + 1
	if r.from > r.to {
		r.close()
	}
	return true
}

// Open reports whether a window is open: whether marks must name the
// redelivered message.
func (r *Redelivery) Open() bool { return r.open.Load() }

// close closes the window. The caller holds mu.
func (r *Redelivery) close() {
	r.open.Store(false)
	r.msgs = nil
}
