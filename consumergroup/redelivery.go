package consumergroup

import (
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// maxRedeliveryWindow bounds how many redelivered messages a partition
// remembers after a backward seek (see redelivery).
const maxRedeliveryWindow = 1 << 16

// redelivery tells a mark of a message delivered before a backward seek
// from a mark of its redelivery at the same offset.
//
// A seek backwards (an operator's rewind, adopted as an offset conflict)
// moves a partition from far to a lower offset from; offsets in [from, far]
// are then delivered twice, once before the seek and once after. A mark
// names a message, and an application may mark one it received before the
// seek late, after the redelivery has passed its offset: judged by offset
// alone it would be accepted, and a commit of it would skip the part of the
// rewind not yet processed. So while the window is open the partition
// remembers each redelivered message of the window, and a mark in the
// window counts only if it names that very message. Marks above far name
// messages delivered only after the seek; marks below from are refused by
// the tracker. A mark through the offset-only OffsetManager interface
// cannot name a message and is refused inside the window.
//
// The window closes once marks pass far. At most maxRedeliveryWindow
// offsets are remembered; marks in the rest of a larger window are refused
// until a mark above it arrives.
type redelivery struct {
	open atomic.Bool // fast path: false while no window is open

	mu       sync.Mutex
	from, to int64 // the window [from, to], while open
	msgs     map[int64]*sarama.ConsumerMessage
}

// seek opens the window [from, far] after a seek to from, when far, the
// highest offset delivered before the seek, is at or above from; otherwise
// it closes any window.
func (r *redelivery) seek(from, far int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from < 0 || far < from {
		r.open.Store(false)
		r.msgs = nil
		return
	}
	r.from, r.to = from, far
	r.msgs = make(map[int64]*sarama.ConsumerMessage)
	r.open.Store(true)
}

// offered records m, about to be handed to the application.
func (r *redelivery) offered(m *sarama.ConsumerMessage) {
	if !r.open.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open.Load() && m.Offset >= r.from && m.Offset <= r.to && m.Offset-r.from < maxRedeliveryWindow {
		r.msgs[m.Offset] = m
	}
}

// allows reports whether a mark of m (nil: of offset only) may count, and
// forgets what a counted mark covers.
func (r *redelivery) allows(m *sarama.ConsumerMessage, offset int64) bool {
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

func (r *redelivery) close() {
	r.open.Store(false)
	r.msgs = nil
}
