package parallel

import "github.com/IBM/sarama"

// entry is one message read from a claim and not yet marked.
type entry struct {
	msg      *sarama.ConsumerMessage
	lane     *lane // nil: runs on its own (a nil key under NilKeyAnyOrder)
	finished bool  // processed, or skipped
}

// window holds a claim's entries in the order read, which is offset
// order. Marks only ever cover its finished prefix, so no mark passes a
// message that has not finished. Only the claim's goroutine uses it.
type window struct {
	entries []*entry
}

// push appends the entry for m.
func (w *window) push(e *entry) { w.entries = append(w.entries, e) }

// size is the number of entries held: read and not yet marked.
func (w *window) size() int { return len(w.entries) }

// advance drops the finished prefix and returns its last message, the one
// to mark, or nil when the oldest entry is unfinished.
func (w *window) advance() *sarama.ConsumerMessage {
	n := 0
	for n < len(w.entries) && w.entries[n].finished {
		n++
	}
	if n == 0 {
		return nil
	}
	last := w.entries[n-1].msg
	clear(w.entries[:n]) // let the messages go
	w.entries = w.entries[n:]
	return last
}

// oldest returns the oldest entry held, or nil.
func (w *window) oldest() *entry {
	if len(w.entries) == 0 {
		return nil
	}
	return w.entries[0]
}
