package offsets

import (
	"sync"

	"github.com/IBM/sarama"
)

// claimDeliveries tells the messages one claim of a partition handed out
// from messages an earlier claim of the same partition, in this instance,
// handed out: a fencing token must be the epoch of the claim that
// delivered a message, never that of a later claim (see
// docs/fencing-tokens.md).
//
// Offsets above what any earlier claim here offered (earlierMax) can only
// be this claim's. At or below it the same offset may have gone out under
// both, so this claim remembers each message it offers there, and only
// that very message counts as its own. At most maxRedeliveryWindow such
// messages are remembered; the rest count as nobody's (the safe answer).
// While no earlier claim here overlaps, Offered costs one comparison.
// Safe for concurrent use.
type claimDeliveries struct {
	earlierMax int64 // highest offset earlier claims here offered; -1: none. Set once.

	mu   sync.Mutex
	msgs map[int64]*sarama.ConsumerMessage // offered at or below earlierMax
}

// Offered records m, about to be handed to the application under this
// claim.
func (d *claimDeliveries) Offered(m *sarama.ConsumerMessage) {
	if m.Offset > d.earlierMax {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.msgs == nil {
		d.msgs = make(map[int64]*sarama.ConsumerMessage)
	}
	if _, ok := d.msgs[m.Offset]; ok || len(d.msgs) < maxRedeliveryWindow {
		d.msgs[m.Offset] = m
	}
}

// Delivered reports whether m is a message this claim handed out (or was
// about to), rather than one of an earlier claim; highest is the highest
// offset this claim offered (-1: none).
func (d *claimDeliveries) Delivered(m *sarama.ConsumerMessage, highest int64) bool {
	switch {
	case m.Offset > highest:
		return false
	case m.Offset > d.earlierMax:
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.msgs[m.Offset] == m
}
