package fetch

import "sync/atomic"

// highWaterMark is where a Source keeps the partition's high-water mark:
// the offset after the last message the leader holds. A nil one keeps
// nothing.
type highWaterMark struct{ mark *atomic.Int64 }

// set sets the mark to hwm, as the leader reported it.
func (h highWaterMark) set(hwm int64) {
	if h.mark != nil {
		h.mark.Store(hwm)
	}
}

// past moves the mark past offset, a message fetched directly: the mark
// is at least the offset after it.
func (h highWaterMark) past(offset int64) {
	if h.mark != nil && offset >= h.mark.Load() {
		h.mark.Store(offset + 1)
	}
}
