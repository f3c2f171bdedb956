package fetch

import "math"

// One scan reads a partition's record batches, whichever decoder read the
// answer: sarama's (saramaBlock) or this package's (decodedRecords). It
// says where the next fetch starts and how many messages the answer
// keeps; the messages are made later (see pendingMessages), and what they
// hold is counted by one loop too (heldFrom). Each decoder answers for a
// batch at a time, so a record costs no interface call. See
// docs/batch-feed.md, "The scan".

// answerBatches is a partition's record batches as scanBatches reads them.
type answerBatches interface {
	// batch returns the header of the i-th batch, and false past the last.
	batch(i int) (scannedBatch, bool)
	// keptRecords walks the records of batch i in order, each offset into
	// keep.add until it is full, and returns keep.
	keptRecords(i int, keep keptRecords) keptRecords
	// heldRecords returns what the messages of batch i's records at and
	// after offset from hold (see heldBytes), at most left of them (left
	// > 0), walked from at (where a pending answer's take goes on in the
	// batch; 0: its start), and how many it counted (see heldFrom).
	heldRecords(i, at int, from int64, left int) (held int64, n int)
	// emptyBatchesEnd returns the offset after the last batch decoded,
	// empty (compacted) ones included, and false when there was none.
	emptyBatchesEnd() (int64, bool)
	// pending returns the kept records, kept of them at and after
	// w.offset, whose messages are not made yet.
	pending(w *fetchWant, kept int) pendingMessages
}

// scannedBatch is what the scan reads of a record batch.
type scannedBatch struct {
	firstOffset int64
	headerEnd   int64 // after the last offset its header names
	recordsEnd  int64 // after its last record, when count > 0 (a header may under-state its end)
	count       int   // its records
	control     bool
	// partial says the batch is cut off by the fetch size; legacy says a
	// magic 0 or 1 message set stands in its place.
	partial, legacy bool
}

// keptRecords counts the records kept of a batch walked record by record:
// those at and after from, at most room of them (room > 0).
type keptRecords struct {
	from int64
	room int
	n    int // kept
	// highest is the highest offset kept (offsets need not rise: a fuzzed
	// batch's do not), last the last one's.
	highest, last int64
}

// add counts the record at offset o, and reports whether room is full.
func (k *keptRecords) add(o int64) (full bool) {
	if o < k.from {
		return false
	}
	k.n, k.highest, k.last = k.n+1, max(k.highest, o), o
	return k.n == k.room
}

// scanBatches scans a's batches for w, in an answer whose high-water mark
// is hwm: the errors, where the next fetch starts (after the last record
// kept, or after the last batch when that is later), how many messages
// are kept, at most w.limit. A batch kept whole costs one call; only a
// batch the want's offset or limit falls inside is walked record by
// record.
func scanBatches(a answerBatches, w *fetchWant, hwm int64) fetchResult {
	limit := max(w.limit, 1)
	kept := 0
	found := func(next int64) fetchResult {
		r := fetchResult{next: next, hwm: hwm}
		if kept > 0 {
			r.unparsed = a.pending(w, kept)
		}
		return r
	}
	next := w.offset
scan:
	for i := 0; ; i++ {
		b, ok := a.batch(i)
		switch {
		case !ok:
			break scan
		case b.legacy:
			return fetchResult{err: errLegacyMessageSet}
		case b.partial && next == w.offset:
			// the batch at the offset itself is cut off: only a larger
			// fetch size reads it
			return fetchResult{err: errPartialBatch, hwm: hwm}
		case b.partial:
			break scan // cut off by the fetch size: the next fetch starts at it
		}
		next = max(next, b.headerEnd)
		if b.control {
			continue
		}
		if b.firstOffset >= w.offset && kept+b.count < limit {
			kept += b.count // every record of it is kept
			if b.count > 0 {
				// a header under-stating its end never sends the next
				// fetch back below a record kept
				next = max(next, b.recordsEnd)
			}
			continue
		}
		walked := a.keptRecords(i, keptRecords{from: w.offset, room: limit - kept, highest: math.MinInt64})
		if walked.n == 0 {
			continue
		}
		if kept += walked.n; kept == limit {
			return found(walked.last + 1)
		}
		next = max(next, walked.highest+1)
	}
	if kept == 0 && next == w.offset && hwm > w.offset {
		// Batches compacted empty: step past them, never past the mark
		// (sarama's partition consumer checks the same).
		if end, ok := a.emptyBatchesEnd(); ok && end > w.offset && end <= hwm {
			return fetchResult{next: end, hwm: hwm}
		}
		return fetchResult{err: errNoRecordsBelowMark, hwm: hwm}
	}
	return found(next)
}

// heldFrom returns what the messages of a's records at and after offset
// from will hold (see heldBytes), at most left of them, walked from batch
// first at at (where a pending answer's take goes on) in the order the
// scan kept them.
func heldFrom(a answerBatches, first, at int, from int64, left int) int64 {
	var held int64
	for i := first; left > 0; i, at = i+1, 0 {
		b, ok := a.batch(i)
		if !ok || b.partial || b.legacy {
			break
		}
		if b.control {
			continue
		}
		h, n := a.heldRecords(i, at, from, left)
		held, left = held+h, left-n
	}
	return held
}
