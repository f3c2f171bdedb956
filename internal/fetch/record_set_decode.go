package fetch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"time"
)

// A partition's records field, decoded as sarama decodes it (the same
// batches kept, the same ones dropped, the same errors) but without a
// sarama.Record per record: a batch keeps its records' bytes, decompressed
// and checked, and its messages are made from them as they go out. See
// docs/batch-feed.md, "Decoding".

// recordBatchHeaderSize is a record batch's bytes before its records
// (magic 2): base offset 8, length 4, leader epoch 4, magic 1, CRC 4,
// attributes 2, last offset delta 4, first and max timestamps 16,
// producer id 8, producer epoch 2, base sequence 4, record count 4.
const recordBatchHeaderSize = 61

// recordBatchOverhead is what a batch's length counts besides its records
// (the header after the base offset and the length itself).
const recordBatchOverhead = recordBatchHeaderSize - 12

// Attributes of a record batch.
const (
	codecMask         = 0x07
	logAppendTimeMask = 0x08
	controlMask       = 0x20
)

// magicOffset is where a batch's (or legacy message's) magic byte is.
const magicOffset = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errMalformedRecords says a partition's records field is not what Kafka
// writes (a CRC mismatch, a length that does not add up, an unknown
// codec): the partition fails, and sarama's partition consumer reads it.
var errMalformedRecords = errors.New("malformed records in the fetch response")

// decodedBatch is one record batch of a partition's answer.
type decodedBatch struct {
	firstOffset     int64
	lastOffsetDelta int32
	firstTimestamp  time.Time
	maxTimestamp    time.Time
	control         bool
	logAppendTime   bool
	count           int    // its records
	lastDelta       int64  // its last record's offset delta (its header may under-state it)
	records         []byte // its records, decompressed
	held            int64  // what its records' messages hold (see heldBytes)
	// partial says the batch is cut off by the fetch size: it holds no
	// record (only ever a partition's first batch, as in sarama).
	partial bool
}

// decodedRecords is a partition's records field.
type decodedRecords struct {
	batches []decodedBatch // sarama's RecordsSet: batches with records, or a first partial one
	// partial says not even a first batch's header came whole (sarama's
	// FetchResponseBlock.Partial).
	partial bool
	// legacy says a magic 0 or 1 message set followed: only sarama's
	// partition consumer reads those.
	legacy bool
	// end is the offset after the last batch decoded, empty ones included
	// (sarama's recordsNextOffset); hasEnd says there was one.
	end    int64
	hasEnd bool
}

// decodeRecords decodes a partition's records field. Decompressed records
// are fresh buffers; the others alias raw.
func decodeRecords(raw []byte) (decodedRecords, error) {
	var d decodedRecords
	for len(raw) > 0 {
		if len(raw) <= magicOffset {
			d.partial = d.partial || len(d.batches) == 0
			break
		}
		if int8(raw[magicOffset]) < 2 { // signed, as sarama reads it
			d.legacy, d.hasEnd = true, false
			break
		}
		b, n, err := decodeBatch(raw)
		if errors.Is(err, errShortBatch) {
			d.partial = d.partial || len(d.batches) == 0
			break
		}
		if err != nil {
			return decodedRecords{}, err
		}
		raw = raw[n:]
		d.end, d.hasEnd = b.firstOffset+int64(b.lastOffsetDelta)+1, true
		if b.count > 0 || b.partial && len(d.batches) == 0 {
			d.batches = append(d.batches, b)
		}
		if b.partial {
			break
		}
	}
	return d, nil
}

// errShortBatch says the records field ends inside a batch's header.
var errShortBatch = errors.New("short record batch header")

// decodeBatch decodes the record batch at the start of raw and returns it
// and its size. A batch whose records are cut off is partial.
func decodeBatch(raw []byte) (decodedBatch, int, error) {
	if len(raw) < recordBatchHeaderSize {
		return decodedBatch{}, 0, errShortBatch
	}
	be := binary.BigEndian
	b := decodedBatch{firstOffset: int64(be.Uint64(raw))}
	length := int32(be.Uint32(raw[8:]))
	attributes := int16(be.Uint16(raw[21:]))
	b.lastOffsetDelta = int32(be.Uint32(raw[23:]))
	b.firstTimestamp = batchTimestamp(int64(be.Uint64(raw[27:])))
	b.maxTimestamp = batchTimestamp(int64(be.Uint64(raw[35:])))
	count := int(int32(be.Uint32(raw[57:])))
	codec := int8(attributes) & codecMask
	switch {
	case count < -1:
		return decodedBatch{}, 0, fmt.Errorf("%w: record count %d", errMalformedRecords, count)
	case count > len(raw)-recordBatchHeaderSize && (codec == 0 || int(length)-recordBatchOverhead > len(raw)-recordBatchHeaderSize):
		// Each uncompressed record takes a byte at least. Compressed ones
		// need not (5,000 empty values fit in 4 KB of zstd): a whole
		// compressed batch has its count checked against its records once
		// decompressed (checkRecords). sarama checks it here for every
		// batch, and reads such a whole batch as cut off.
		return decodedBatch{}, 0, errShortBatch
	}
	b.count = max(count, 0)
	b.control = attributes&controlMask != 0
	b.logAppendTime = attributes&logAppendTimeMask != 0
	size := int(length) - recordBatchOverhead
	if size < 0 {
		return decodedBatch{}, 0, fmt.Errorf("%w: batch length %d", errMalformedRecords, length)
	}
	if size > len(raw)-recordBatchHeaderSize {
		b.partial, b.count = true, 0
		return b, len(raw), nil
	}
	end := recordBatchHeaderSize + size
	if crc32.Checksum(raw[21:end], castagnoli) != be.Uint32(raw[17:]) {
		return decodedBatch{}, 0, fmt.Errorf("%w: CRC mismatch", errMalformedRecords)
	}
	records, err := decompress(codec, raw[recordBatchHeaderSize:end])
	if err != nil {
		return decodedBatch{}, 0, err
	}
	switch held, last, err := checkRecords(records, count); {
	case errors.Is(err, errShortRecords):
		b.partial, b.count = true, 0 // as sarama reads a batch whose records are cut short
	case err != nil:
		return decodedBatch{}, 0, err
	default:
		b.records, b.held, b.lastDelta = records, held, last
	}
	return b, end, nil
}

// batchTimestamp is a batch's timestamp field as sarama reads it: a
// negative one is the zero time.
func batchTimestamp(millis int64) time.Time {
	if millis < 0 {
		return time.Time{}
	}
	return time.Unix(millis/1000, (millis%1000)*int64(time.Millisecond))
}

// errShortRecords says a batch's records end before its record count.
var errShortRecords = errors.New("records cut short")

// checkRecords checks that records holds count records and nothing more,
// and returns what their messages hold (see heldBytes) and the last
// record's offset delta.
func checkRecords(records []byte, count int) (held, lastDelta int64, err error) {
	r := recordReader{buf: records}
	var rec decodedRecord
	for range count {
		if err := r.next(&rec); err != nil {
			return 0, 0, err
		}
		held += int64(len(rec.key)+len(rec.value)) + rec.headerBytes
		lastDelta = rec.offsetDelta
	}
	if r.off != len(records) {
		return 0, 0, fmt.Errorf("%w: %d bytes after the records", errMalformedRecords, len(records)-r.off)
	}
	return held, lastDelta, nil
}

// decodedRecord is one record of a batch; its key, value and headers alias
// the batch's records.
type decodedRecord struct {
	timestampDelta int64 // ms
	offsetDelta    int64
	key, value     []byte
	// headers is the header count (-1: none), headersAt where they start,
	// headerBytes their keys' and values' bytes.
	headers     int
	headersAt   int
	headerBytes int64
}

// recordReader reads a batch's records one after the other.
type recordReader struct {
	buf []byte
	off int
}

// next reads the next record into rec. It steps over its headers
// (rec.headersAt says where they start): headers reads them.
func (r *recordReader) next(rec *decodedRecord) error {
	lengthAt := r.off
	length, err := r.varint()
	if err != nil {
		return err
	}
	if r.off >= len(r.buf) {
		r.off = len(r.buf)
		return errShortRecords
	}
	r.off++ // attributes
	if rec.timestampDelta, err = r.varint(); err != nil {
		return err
	}
	if rec.offsetDelta, err = r.varint(); err != nil {
		return err
	}
	if rec.key, err = r.bytes(); err != nil {
		return err
	}
	if rec.value, err = r.bytes(); err != nil {
		return err
	}
	headers, err := r.varint()
	if err != nil {
		return err
	}
	if headers > int64(len(r.buf)-r.off) {
		return errShortRecords
	}
	rec.headers, rec.headersAt, rec.headerBytes = int(max(headers, -1)), r.off, 0
	for range max(headers, 0) {
		k, err := r.bytes()
		if err != nil {
			return err
		}
		v, err := r.bytes()
		if err != nil {
			return err
		}
		rec.headerBytes += int64(len(k) + len(v))
	}
	// sarama compares the length with the record's size after a length
	// field of the length's canonical size
	if int64(r.off-lengthAt-varintSize(length)) != length {
		return fmt.Errorf("%w: record length %d", errMalformedRecords, length)
	}
	return nil
}

// varintSize is the size of v's canonical zig-zag varint encoding.
func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return max(1, (bits.Len64(u)+6)/7)
}

// varint reads a zig-zag varint, as binary.Varint would (the same
// overflow), inline.
func (r *recordReader) varint() (int64, error) {
	var x uint64
	var s uint
	for i, b := range r.buf[r.off:] {
		if i == binary.MaxVarintLen64 || i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, fmt.Errorf("%w: varint overflow", errMalformedRecords)
		}
		if b < 0x80 {
			x |= uint64(b) << s
			r.off += i + 1
			return int64(x>>1) ^ -int64(x&1), nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	r.off = len(r.buf)
	return 0, errShortRecords
}

// bytes reads a varint-prefixed byte string: nil for a length of -1, an
// empty (not nil) slice for 0, as sarama reads them.
func (r *recordReader) bytes() ([]byte, error) {
	n, err := r.varint()
	switch {
	case err != nil:
		return nil, err
	case n == -1:
		return nil, nil
	case n > int64(len(r.buf)-r.off):
		r.off = len(r.buf)
		return nil, errShortRecords
	case n < -1:
		return nil, fmt.Errorf("%w: byte string length %d", errMalformedRecords, n)
	}
	b := r.buf[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return b, nil
}
