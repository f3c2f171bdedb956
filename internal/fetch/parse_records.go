package fetch

import (
	"errors"
	"unsafe"

	"github.com/IBM/sarama"
)

// A round's answer is read in two steps. The round's loop, which reads
// every partition of the round one after the other, only scans each
// partition's record batches (scanRecords): the errors, where the next
// fetch starts, how many messages the answer holds. The caller waiting
// for the answer (a partition's batch feed, or a first fetch) makes the
// messages (fetchResult.parse), so the partitions of a round are parsed
// side by side and the loop sends its next round sooner. See
// docs/performance.md, "Per message".

// unparsedRecords is a partition's answer whose messages are not made
// yet.
type unparsedRecords struct {
	block     *sarama.FetchResponseBlock
	topic     string
	partition int32
	from      int64 // the want's offset: records before it are skipped
	kept      int   // how many messages it holds
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
	limit := max(w.limit, 1)
	kept := 0
	found := func(next int64) fetchResult {
		r := fetchResult{next: next, hwm: block.HighWaterMarkOffset}
		if kept > 0 {
			r.unparsed = &unparsedRecords{block: block, topic: w.topic, partition: w.partition, from: w.offset, kept: kept}
		}
		return r
	}
	next := w.offset
	for _, recs := range block.RecordsSet {
		if recs == nil {
			continue
		}
		batch := recs.RecordBatch
		if batch == nil {
			return fetchResult{err: errLegacyMessageSet}
		}
		if batch.PartialTrailingRecord {
			if next == w.offset {
				// the batch at the offset itself is cut off: only a
				// larger fetch size reads it
				return fetchResult{err: errPartialBatch, hwm: block.HighWaterMarkOffset}
			}
			break // cut off by the fetch size: the next fetch starts at it
		}
		next = max(next, batch.FirstOffset+int64(batch.LastOffsetDelta)+1)
		if batch.Control {
			continue
		}
		if batch.FirstOffset >= w.offset && kept+len(batch.Records) < limit {
			kept += len(batch.Records) // every record of it is kept
			continue
		}
		for _, rec := range batch.Records {
			o := batch.FirstOffset + rec.OffsetDelta
			if o < w.offset {
				continue
			}
			if kept++; kept == limit {
				return found(o + 1)
			}
		}
	}
	if kept == 0 && next == w.offset && block.HighWaterMarkOffset > w.offset {
		// Batches compacted empty: step past them, never past the mark
		// (sarama's partition consumer checks the same).
		if end, ok := emptyBatchesEnd(block); ok && end > w.offset && end <= block.HighWaterMarkOffset {
			return fetchResult{next: end, hwm: block.HighWaterMarkOffset}
		}
		return fetchResult{err: errNoRecordsBelowMark, hwm: block.HighWaterMarkOffset}
	}
	return found(next)
}

// messages returns how many messages r holds, made or not.
func (r *fetchResult) messages() int {
	if r.unparsed != nil {
		return r.unparsed.kept
	}
	return len(r.msgs)
}

// parse makes the messages scanRecords counted, once, and counts what
// they hold against the feed budget (bytes, as heldBytes counts them).
func (r *fetchResult) parse() {
	if u := r.unparsed; u != nil {
		r.msgs, r.bytes = u.messages()
		r.unparsed = nil
	}
}

// messages makes the answer's messages, the kept records at and after
// from, as scanRecords walked them, and returns the bytes they hold (see
// heldBytes), counted on the way rather than in a pass of their own. The
// kept ones alias the response buffer, as sarama's do.
func (u *unparsedRecords) messages() (msgs []*sarama.ConsumerMessage, held int64) {
	msgs = make([]*sarama.ConsumerMessage, 0, u.kept)
	var slab messageSlab
	for _, recs := range u.block.RecordsSet {
		if recs == nil {
			continue
		}
		batch := recs.RecordBatch // not nil: scanRecords returned an error otherwise
		if batch.PartialTrailingRecord {
			break
		}
		if batch.Control {
			continue
		}
		for _, rec := range batch.Records {
			o := batch.FirstOffset + rec.OffsetDelta
			if o < u.from {
				continue
			}
			ts := batch.FirstTimestamp.Add(rec.TimestampDelta)
			if batch.LogAppendTime {
				ts = batch.MaxTimestamp
			}
			// Field by field into the zeroed slab: a composite literal
			// zeroes the message again and copies it with a bulk barrier.
			m := slab.next(len(msgs), u.kept)
			m.Topic, m.Partition, m.Offset = u.topic, u.partition, o
			m.Key, m.Value, m.Timestamp, m.Headers = rec.Key, rec.Value, ts, rec.Headers
			held += int64(len(rec.Key) + len(rec.Value))
			for _, h := range rec.Headers {
				held += int64(len(h.Key) + len(h.Value))
			}
			if msgs = append(msgs, m); len(msgs) == u.kept {
				return msgs, held
			}
		}
	}
	return msgs, held
}

// messageSlab makes a fetch answer's messages in slabs of up to 32 KiB,
// not one allocation each: small enough to come from the allocator's warm
// spans (a slab of a whole answer is fresh memory, faulted in message by
// message) and to bound what one message an application keeps pins. See
// docs/performance.md, "Per message".
type messageSlab []sarama.ConsumerMessage

// slabMessages is how many messages one slab holds.
const slabMessages = 32 << 10 / int(unsafe.Sizeof(sarama.ConsumerMessage{}))

// next returns a zeroed message, the i-th of at most n.
func (s *messageSlab) next(i, n int) *sarama.ConsumerMessage {
	if len(*s) == 0 {
		*s = make(messageSlab, max(min(n-i, slabMessages), 1))
	}
	m := &(*s)[0]
	*s = (*s)[1:]
	return m
}
