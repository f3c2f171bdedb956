package fetch

import (
	"errors"
	"time"

	"github.com/IBM/sarama"
)

// scanAnswer is scanRecords for a partition's answer this package decoded
// (see decodeFetchResponse): the same errors, the same next offset, the
// same messages kept, made later from the records' bytes (see
// decodedPending). A partition whose records do not decode fails alone.
func scanAnswer(p *partitionAnswer, w *fetchWant) fetchResult {
	if p == nil {
		return fetchResult{err: errors.New("fetch response without the partition")}
	}
	if !errors.Is(p.err, sarama.ErrNoError) {
		return fetchResult{err: p.err}
	}
	recs, err := decodeRecords(p.records)
	if err != nil {
		return fetchResult{err: err}
	}
	if recs.partial {
		return fetchResult{err: errPartialBatch}
	}
	// kept in the answer, so that scanBatches' interface does not move
	// them to the heap once more
	p.scanned = recs
	return scanBatches(&p.scanned, w, p.hwm)
}

// batch implements answerBatches: a legacy message set reads as a last
// batch.
func (d *decodedRecords) batch(i int) (scannedBatch, bool) {
	if i >= len(d.batches) {
		return scannedBatch{legacy: true}, i == len(d.batches) && d.legacy
	}
	b := &d.batches[i]
	return scannedBatch{firstOffset: b.firstOffset, headerEnd: b.firstOffset + int64(b.lastOffsetDelta) + 1,
		recordsEnd: b.firstOffset + b.lastDelta + 1, count: b.count, control: b.control, partial: b.partial}, true
}

// keptRecords implements answerBatches.
func (d *decodedRecords) keptRecords(i int, keep keptRecords) keptRecords {
	b := &d.batches[i]
	rr := recordReader{buf: b.records}
	var rec decodedRecord
	for range b.count {
		_ = rr.next(&rec) // checked by decodeRecords
		if keep.add(b.firstOffset + rec.offsetDelta) {
			break
		}
	}
	return keep
}

// emptyBatchesEnd implements answerBatches.
func (d *decodedRecords) emptyBatchesEnd() (int64, bool) { return d.end, d.hasEnd }

// pending implements answerBatches.
func (d *decodedRecords) pending(w *fetchWant, kept int) pendingMessages {
	return &decodedPending{answer: *d, topic: w.topic, partition: w.partition, from: w.offset, kept: kept}
}

// heldRecords implements answerBatches: a batch kept whole counts what
// decodeRecords summed; only a batch kept in part is walked.
func (d *decodedRecords) heldRecords(i, at int, from int64, left int) (held int64, n int) {
	b := &d.batches[i]
	if at == 0 && b.firstOffset >= from && b.count <= left {
		return b.held, b.count
	}
	rr := recordReader{buf: b.records, off: at}
	var rec decodedRecord
	for rr.off < len(rr.buf) && n < left {
		_ = rr.next(&rec) // checked by decodeRecords
		if b.firstOffset+rec.offsetDelta < from {
			continue
		}
		held += int64(len(rec.key)+len(rec.value)) + rec.headerBytes
		n++
	}
	return held, n
}

// decodedPending is a decoded partition answer's kept records whose
// messages are not made yet.
type decodedPending struct {
	// answer is a copy of the partition's decoded batch descriptors, not
	// a pointer into the response's. Uncompressed records still alias the
	// response's buffer (see record_set_decode.go), which a batch left
	// waiting for its reader past detachAfter copies out (detach.go).
	answer    decodedRecords
	topic     string
	partition int32
	from      int64 // the want's offset: records before it are skipped
	kept      int   // how many messages it holds
	// Where take goes on: the batch, and the offset in its records; and
	// how many messages were made.
	batch, at, made int
}

func (u *decodedPending) count() int { return u.kept }
func (u *decodedPending) left() int  { return u.kept - u.made }

// take implements pendingMessages: messages in one slab (see
// slabMessages), their keys, values and headers aliasing the records'
// bytes, their headers in one slab too.
func (u *decodedPending) take(msgs []*sarama.ConsumerMessage, n int) ([]*sarama.ConsumerMessage, int64) {
	n = min(n, u.kept-u.made)
	if n <= 0 {
		return msgs, 0
	}
	slab := make([]sarama.ConsumerMessage, n)
	var headers []sarama.RecordHeader
	var headerPtrs []*sarama.RecordHeader
	var held int64
	i := 0
	var rec decodedRecord
	for ; u.batch < len(u.answer.batches); u.batch, u.at = u.batch+1, 0 {
		b := &u.answer.batches[u.batch]
		if b.partial {
			u.batch = len(u.answer.batches)
			break
		}
		if b.control {
			continue
		}
		rr := recordReader{buf: b.records, off: u.at}
		for rr.off < len(rr.buf) {
			at := rr.off
			_ = rr.next(&rec) // checked by decodeRecords
			o := b.firstOffset + rec.offsetDelta
			if o < u.from {
				continue
			}
			if i == n {
				u.at = at // goes on at this record
				return msgs, held
			}
			ts := b.firstTimestamp.Add(time.Duration(rec.timestampDelta) * time.Millisecond)
			if b.logAppendTime {
				ts = b.maxTimestamp
			}
			m := &slab[i]
			i++
			m.Topic, m.Partition, m.Offset = u.topic, u.partition, o
			m.Key, m.Value, m.Timestamp, m.BlockTimestamp = rec.key, rec.value, ts, b.maxTimestamp
			held += int64(len(rec.key)+len(rec.value)) + rec.headerBytes
			if rec.headers == 0 {
				m.Headers = []*sarama.RecordHeader{} // as sarama decodes no header
			} else if rec.headers > 0 {
				if len(headers)+rec.headers > cap(headers) {
					// as many for each message to come, but no more than
					// the batch's records left could hold (a header is at
					// least two bytes): one record's many headers are not a
					// reservation for every message after it
					guess := min((n-i+1)*rec.headers, rec.headers+(len(rr.buf)-rr.off)/2)
					headers = make([]sarama.RecordHeader, 0, max(guess, 8))
					headerPtrs = make([]*sarama.RecordHeader, 0, cap(headers))
				}
				hr := recordReader{buf: b.records, off: rec.headersAt}
				start := len(headerPtrs)
				for range rec.headers {
					k, _ := hr.bytes()
					v, _ := hr.bytes()
					headers = append(headers, sarama.RecordHeader{Key: k, Value: v})
					headerPtrs = append(headerPtrs, &headers[len(headers)-1])
				}
				m.Headers = headerPtrs[start:len(headerPtrs):len(headerPtrs)]
			}
			msgs = append(msgs, m)
			if u.made++; u.made == u.kept {
				u.at = rr.off
				return msgs, held
			}
		}
	}
	return msgs, held
}

// held implements pendingMessages (see heldFrom).
func (u *decodedPending) held() int64 {
	return heldFrom(&u.answer, u.batch, u.at, u.from, u.kept-u.made)
}
