package fetch

import (
	"errors"
	"slices"
	"unsafe"

	"github.com/IBM/sarama"
)

// A round's answer is read in two steps. The round's loop, which reads
// every partition of the round one after the other, only scans each
// partition's record batches (scanBatches): the errors, where the next
// fetch starts, how many messages the answer holds. The messages are made
// later, outside the loop: by a batch feed's Source a slab at a time as it
// hands them out (unparsedRecords.take), so a message is made just before
// it goes out, and only the messages going out exist; by a first fetch's
// caller all at once (fetchResult.parse). See docs/performance.md, "Per
// message".

// pendingMessages are the kept records of a partition's answer whose
// messages are not made yet: unparsedRecords for an answer sarama decoded,
// decodedPending for one this package did.
type pendingMessages interface {
	// take makes the next messages, at most n, in one slab, appends them
	// to msgs and returns the bytes they hold (see heldBytes).
	take(msgs []*sarama.ConsumerMessage, n int) ([]*sarama.ConsumerMessage, int64)
	// held returns what the messages not made yet will hold.
	held() int64
	count() int // the messages kept, made or not
	left() int  // the messages not made yet
}

// unparsedRecords is a partition's answer sarama decoded whose messages
// are not made yet.
type unparsedRecords struct {
	block     *sarama.FetchResponseBlock
	topic     string
	partition int32
	from      int64 // the want's offset: records before it are skipped
	kept      int   // how many messages it holds
	// Where take goes on: the record set and the record in it; and how
	// many messages were made.
	set, rec, made int
}

// parseRecords is parseFirstBatch that also says where the next fetch
// starts: after the last message kept, or, when none was kept short of the
// limit, after the last record batch (control batches, compacted-away
// records).
func parseRecords(block *sarama.FetchResponseBlock, w *fetchWant) fetchResult {
	r := scanRecords(block, w)
	r.parse()
	return r
}

// scanRecords is parseRecords without making the messages: the result
// counts them (fetchResult.messages), and parse makes them.
func scanRecords(block *sarama.FetchResponseBlock, w *fetchWant) fetchResult {
	if block == nil {
		return fetchResult{err: errors.New("fetch response without the partition")}
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return fetchResult{err: block.Err}
	}
	if block.Partial {
		return fetchResult{err: errPartialBatch}
	}
	return scanBatches((*saramaBlock)(block), w, block.HighWaterMarkOffset)
}

// saramaBlock is a partition's answer sarama decoded, as scanBatches
// reads it: a nil record set reads as a batch without records, a legacy
// message set as legacy.
type saramaBlock sarama.FetchResponseBlock

func (s *saramaBlock) batch(i int) (scannedBatch, bool) {
	if i >= len(s.RecordsSet) {
		return scannedBatch{}, false
	}
	recs := s.RecordsSet[i]
	switch {
	case recs == nil:
		return scannedBatch{}, true
	case recs.RecordBatch == nil:
		return scannedBatch{legacy: true}, true
	}
	batch := recs.RecordBatch
	b := scannedBatch{firstOffset: batch.FirstOffset, headerEnd: batch.FirstOffset + int64(batch.LastOffsetDelta) + 1,
		count: len(batch.Records), control: batch.Control, partial: batch.PartialTrailingRecord}
	if b.count > 0 {
		b.recordsEnd = batch.FirstOffset + batch.Records[b.count-1].OffsetDelta + 1
	}
	return b, true
}

func (s *saramaBlock) keptRecords(i int, keep keptRecords) keptRecords {
	if recs := s.RecordsSet[i]; recs != nil {
		batch := recs.RecordBatch
		for _, rec := range batch.Records {
			if keep.add(batch.FirstOffset + rec.OffsetDelta) {
				break
			}
		}
	}
	return keep
}

func (s *saramaBlock) heldRecords(i, at int, from int64, left int) (held int64, n int) {
	recs := s.RecordsSet[i]
	if recs == nil {
		return 0, 0
	}
	batch := recs.RecordBatch
	for _, rec := range batch.Records[at:] {
		if batch.FirstOffset+rec.OffsetDelta < from {
			continue
		}
		held += recordBytes(rec)
		if n++; n == left {
			break
		}
	}
	return held, n
}

func (s *saramaBlock) emptyBatchesEnd() (int64, bool) {
	return emptyBatchesEnd((*sarama.FetchResponseBlock)(s))
}

func (s *saramaBlock) pending(w *fetchWant, kept int) pendingMessages {
	return &unparsedRecords{block: (*sarama.FetchResponseBlock)(s), topic: w.topic, partition: w.partition, from: w.offset, kept: kept}
}

func (u *unparsedRecords) count() int { return u.kept }
func (u *unparsedRecords) left() int  { return u.kept - u.made }

// messages returns how many messages r holds, made or not.
func (r *fetchResult) messages() int {
	if r.unparsed != nil {
		return r.unparsed.count()
	}
	return len(r.msgs)
}

// parse makes the messages scanRecords counted that are not made yet,
// and counts what they hold against the feed budget (bytes, as heldBytes
// counts them).
func (r *fetchResult) parse() {
	if u := r.unparsed; u != nil {
		r.msgs, r.bytes = makeMessages(u, r.msgs)
		r.unparsed = nil
	}
}

// held returns what r's messages, made or not, hold against the feed
// budget (see heldBytes).
func (r *fetchResult) held() int64 {
	if r.unparsed != nil {
		return r.unparsed.held()
	}
	return heldBytes(r.msgs)
}

// makeMessages appends the messages of u not made yet to msgs, and
// returns the bytes they hold (see heldBytes), counted on the way rather
// than in a pass of their own.
func makeMessages(u pendingMessages, msgs []*sarama.ConsumerMessage) ([]*sarama.ConsumerMessage, int64) {
	msgs = slices.Grow(msgs, u.left())
	var held int64
	for u.left() > 0 {
		var n int64
		before := len(msgs)
		if msgs, n = u.take(msgs, slabMessages); len(msgs) == before {
			break
		}
		held += n
	}
	return msgs, held
}

// take makes the next messages, at most n, the kept records at and after
// from as scanRecords walked them, in one slab (see slabMessages); it
// appends them to msgs and returns the bytes they hold. The messages alias
// the response buffer, as sarama's do.
func (u *unparsedRecords) take(msgs []*sarama.ConsumerMessage, n int) ([]*sarama.ConsumerMessage, int64) {
	n = min(n, u.kept-u.made)
	if n <= 0 {
		return msgs, 0
	}
	slab := make([]sarama.ConsumerMessage, n)
	var held int64
	i := 0
	for ; u.set < len(u.block.RecordsSet); u.set, u.rec = u.set+1, 0 {
		recs := u.block.RecordsSet[u.set]
		if recs == nil {
			continue
		}
		batch := recs.RecordBatch // not nil: scanRecords returned an error otherwise
		if batch.PartialTrailingRecord {
			u.set = len(u.block.RecordsSet)
			break
		}
		if batch.Control {
			continue
		}
		for ; u.rec < len(batch.Records); u.rec++ {
			rec := batch.Records[u.rec]
			o := batch.FirstOffset + rec.OffsetDelta
			if o < u.from {
				continue
			}
			if i == n {
				return msgs, held // goes on at this record
			}
			ts := batch.FirstTimestamp.Add(rec.TimestampDelta)
			if batch.LogAppendTime {
				ts = batch.MaxTimestamp
			}
			// Field by field into the zeroed slab: a composite literal
			// zeroes the message again and copies it with a bulk barrier.
			m := &slab[i]
			i++
			m.Topic, m.Partition, m.Offset = u.topic, u.partition, o
			m.Key, m.Value, m.Timestamp, m.Headers = rec.Key, rec.Value, ts, rec.Headers
			m.BlockTimestamp = batch.MaxTimestamp // as sarama's partition consumer sets it
			held += recordBytes(rec)
			msgs = append(msgs, m)
			if u.made++; u.made == u.kept {
				return msgs, held
			}
		}
	}
	return msgs, held
}

// held implements pendingMessages (see heldFrom).
func (u *unparsedRecords) held() int64 {
	return heldFrom((*saramaBlock)(u.block), u.set, u.rec, u.from, u.kept-u.made)
}

// recordBytes is what a record's message holds against the feed budget:
// its key, value and headers (see heldBytes).
func recordBytes(rec *sarama.Record) int64 {
	n := int64(len(rec.Key) + len(rec.Value))
	for _, h := range rec.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// slabMessages is how many messages one slab holds: up to 32 KiB of them,
// not one allocation each, small enough to come from the allocator's warm
// spans (a slab of a whole answer is fresh memory, faulted in message by
// message) and to bound what one message an application keeps pins. See
// docs/performance.md, "Per message".
const slabMessages = 32 << 10 / int(unsafe.Sizeof(sarama.ConsumerMessage{}))
