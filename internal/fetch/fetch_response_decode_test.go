package fetch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// batchSpec describes a record batch for sarama to encode.
type batchSpec struct {
	first         int64
	deltas        []int64 // the records' offset deltas (gaps: compacted away)
	codec         sarama.CompressionCodec
	control       bool
	logAppendTime bool
	headers       int
	nullKey       bool
	emptyValue    bool
	noTimestamp   bool
}

func (s batchSpec) records() *sarama.Records {
	base := time.UnixMilli(1_700_000_000_123)
	b := &sarama.RecordBatch{Version: 2, FirstOffset: s.first, Codec: s.codec, Control: s.control,
		LogAppendTime: s.logAppendTime, ProducerID: -1, FirstTimestamp: base, MaxTimestamp: base.Add(time.Second)}
	if s.noTimestamp {
		b.FirstTimestamp, b.MaxTimestamp = time.Time{}, time.Time{}
	}
	for i, d := range s.deltas {
		r := &sarama.Record{OffsetDelta: d, TimestampDelta: time.Duration(i) * time.Millisecond,
			Key: []byte(fmt.Sprintf("key-%d", d)), Value: []byte(fmt.Sprintf("value of %d at %d", d, s.first))}
		if s.nullKey && i%2 == 0 {
			r.Key = nil
		}
		if s.emptyValue && i%3 == 0 {
			r.Value = []byte{}
		}
		if s.control {
			r.Key = []byte{0, 0, 0, 1} // a commit marker
			r.Value = []byte{0, 0, 0, 0, 0, 0}
		}
		for h := range s.headers {
			var v []byte
			if h%2 == 0 {
				v = []byte(fmt.Sprintf("header value %d", h))
			}
			r.Headers = append(r.Headers, &sarama.RecordHeader{Key: []byte(fmt.Sprintf("h%d", h)), Value: v})
		}
		b.Records = append(b.Records, r)
	}
	if len(s.deltas) > 0 {
		b.LastOffsetDelta = int32(s.deltas[len(s.deltas)-1])
	}
	return &sarama.Records{RecordBatch: b}
}

// seq returns the offset deltas 0..n-1.
func seq(n int) []int64 {
	d := make([]int64, n)
	for i := range d {
		d[i] = int64(i)
	}
	return d
}

// partitionSpec describes a partition's answer.
type partitionSpec struct {
	topic     string
	partition int32
	err       sarama.KError
	hwm       int64
	aborted   int
	batches   []batchSpec
}

// fetchResponse builds a sarama FetchResponse of parts.
func fetchResponse(throttle time.Duration, parts ...partitionSpec) *sarama.FetchResponse {
	resp := &sarama.FetchResponse{ThrottleTime: throttle, Blocks: map[string]map[int32]*sarama.FetchResponseBlock{}}
	for _, p := range parts {
		if resp.Blocks[p.topic] == nil {
			resp.Blocks[p.topic] = map[int32]*sarama.FetchResponseBlock{}
		}
		block := &sarama.FetchResponseBlock{Err: p.err, HighWaterMarkOffset: p.hwm, LastStableOffset: p.hwm,
			LogStartOffset: 3, PreferredReadReplica: -1}
		for i := range p.aborted {
			block.AbortedTransactions = append(block.AbortedTransactions, &sarama.AbortedTransaction{ProducerID: int64(i + 7), FirstOffset: int64(i)})
		}
		for _, b := range p.batches {
			block.RecordsSet = append(block.RecordsSet, b.records())
		}
		resp.Blocks[p.topic][p.partition] = block
	}
	return resp
}

// responseShapes are the responses the decoder is compared with sarama's
// on, and the fuzz target's seeds.
func responseShapes() map[string]*sarama.FetchResponse {
	shapes := map[string]*sarama.FetchResponse{
		"empty":            fetchResponse(0),
		"throttled":        fetchResponse(250 * time.Millisecond),
		"one batch":        fetchResponse(0, partitionSpec{topic: "t", hwm: 10, batches: []batchSpec{{first: 0, deltas: seq(10)}}}),
		"no records":       fetchResponse(0, partitionSpec{topic: "t", hwm: 10}),
		"partition errors": fetchResponse(0, partitionSpec{topic: "t", err: sarama.ErrOffsetOutOfRange, hwm: -1}, partitionSpec{topic: "t", partition: 1, err: sarama.ErrNotLeaderForPartition, hwm: -1}, partitionSpec{topic: "u", partition: 2, hwm: 30, batches: []batchSpec{{first: 20, deltas: seq(5), headers: 2}}}),
		"control and aborted": fetchResponse(0, partitionSpec{topic: "t", hwm: 20, aborted: 2, batches: []batchSpec{
			{first: 0, deltas: seq(4)}, {first: 4, deltas: seq(1), control: true}, {first: 5, deltas: seq(3)}}}),
		"compacted gaps": fetchResponse(0, partitionSpec{topic: "t", hwm: 100, batches: []batchSpec{
			{first: 10, deltas: []int64{0, 3, 4, 9}}, {first: 20, deltas: []int64{5}}, {first: 40, deltas: []int64{1, 2, 30}}}}),
		"empty batches": fetchResponse(0, partitionSpec{topic: "t", hwm: 50, batches: []batchSpec{
			{first: 0, deltas: nil}, {first: 10, deltas: nil}}}),
		"empty then records": fetchResponse(0, partitionSpec{topic: "t", hwm: 50, batches: []batchSpec{
			{first: 0, deltas: nil}, {first: 10, deltas: seq(3)}}}),
		"headers and nulls": fetchResponse(0, partitionSpec{topic: "t", partition: 3, hwm: 10, batches: []batchSpec{
			{first: 0, deltas: seq(6), headers: 3, nullKey: true, emptyValue: true}, {first: 6, deltas: seq(2), headers: 0}}}),
		"log append time": fetchResponse(0, partitionSpec{topic: "t", hwm: 10, batches: []batchSpec{
			{first: 0, deltas: seq(4), logAppendTime: true}, {first: 4, deltas: seq(2), noTimestamp: true}}}),
	}
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		shapes["codec "+codec.String()] = fetchResponse(0,
			partitionSpec{topic: "t", hwm: 40, batches: []batchSpec{{first: 0, deltas: seq(20), codec: codec, headers: 1}, {first: 20, deltas: []int64{0, 5, 7}, codec: codec}}},
			partitionSpec{topic: "t", partition: 1, hwm: 5, batches: []batchSpec{{first: 0, deltas: seq(5), codec: codec, nullKey: true}}})
	}
	return shapes
}

// Every shape, at every version the fetchers send, decodes as sarama
// decodes it, and every want is answered as the old path answers it.
func TestDecodeFetchResponseAgreesWithSarama(t *testing.T) {
	shapes := responseShapes()
	for _, v := range fetchVersions {
		oracle := newSaramaOracle(t, v)
		for name, resp := range shapes {
			t.Run(fmt.Sprintf("v%d/%s", v, name), func(t *testing.T) {
				body := encodeWithSarama(t, resp, v)
				checkAgainstSarama(t, oracle, body, v, true)
				for _, cut := range trailingCuts(t, body, v) {
					checkAgainstSarama(t, oracle, cut, v, true)
				}
			})
		}
	}
}

// checkAgainstSarama decodes body with sarama and with decodeFetchResponse
// and compares them where sarama accepts it (sarama must, when
// mustAccept). It never lets ours panic.
func checkAgainstSarama(t testing.TB, oracle *saramaOracle, body []byte, v int16, mustAccept bool) {
	t.Helper()
	theirs, err := oracle.decode(t, body)
	ours, ourErr := decodeFetchResponse(body, v)
	if ourErr == nil {
		for i := range ours.partitions { // every partition scans without panicking
			p := &ours.partitions[i]
			r := scanAnswer(p, &fetchWant{topic: p.topic, partition: p.partition, limit: 3})
			r.parse()
		}
	}
	if err != nil {
		if mustAccept {
			t.Fatalf("sarama rejects the response: %v", err)
		}
		return
	}
	if ourErr != nil {
		t.Fatalf("sarama accepts the response, ours fails: %v", ourErr)
	}
	compareWithSarama(t, theirs, ours)
}

// trailingCuts returns body with each partition's records cut short at
// several places (a fetch size ending inside a batch), one partition at a
// time, the lengths fixed up.
func trailingCuts(t testing.TB, body []byte, v int16) [][]byte {
	a, err := decodeFetchResponse(body, v)
	if err != nil {
		t.Fatal(err)
	}
	var cuts [][]byte
	for i, p := range a.partitions {
		for _, keep := range []int{len(p.records) - 1, len(p.records) - 30, len(p.records) - 70, 70, 40, 12} {
			if keep <= 0 || keep >= len(p.records) {
				continue
			}
			parts := make([]partitionAnswer, len(a.partitions))
			copy(parts, a.partitions)
			parts[i].records = p.records[:keep]
			cuts = append(cuts, encodeAnswer(a, parts, v))
		}
	}
	return cuts
}

// encodeAnswer encodes a response as the broker would, with a's fields and
// parts as its partitions (each its own topic entry).
func encodeAnswer(a *fetchAnswer, parts []partitionAnswer, v int16) []byte {
	w := wireWriter{flexible: v >= 12}
	w.int32(int32(a.throttle / time.Millisecond))
	if v >= 7 {
		w.int16(int16(a.errCode))
		w.int32(a.sessionID)
	}
	w.arrayLength(len(parts))
	for _, p := range parts {
		w.string(p.topic)
		w.arrayLength(1)
		w.int32(p.partition)
		w.int16(int16(p.err))
		w.int64(p.hwm)
		w.int64(p.lastStable)
		w.int64(p.logStart)
		if p.aborted == nil && v < 12 {
			w.int32(-1)
		} else {
			w.arrayLength(len(p.aborted))
		}
		for _, t := range p.aborted {
			w.int64(t.producerID)
			w.int64(t.firstOffset)
			w.tags()
		}
		if v >= 11 {
			w.int32(p.preferredReplica)
		}
		switch {
		case v >= 12 && p.records == nil:
			w.buf = append(w.buf, 0)
		case v >= 12:
			w.buf = binary.AppendUvarint(w.buf, uint64(len(p.records))+1)
		case p.records == nil:
			w.int32(-1)
		default:
			w.int32(int32(len(p.records)))
		}
		w.buf = append(w.buf, p.records...)
		w.tags()
		w.tags()
	}
	w.tags()
	return w.buf
}

// A partition answering an error with null records, below Fetch v12
// (which sarama cannot decode at all, so the old path fetched every
// partition of the round alone), fails that partition only.
func TestDecodeNullRecordsFailOnlyTheirPartition(t *testing.T) {
	for _, v := range fetchVersions {
		body := encodeWithSarama(t, responseShapes()["one batch"], v)
		a, err := decodeFetchResponse(body, v)
		if err != nil {
			t.Fatal(err)
		}
		parts := append([]partitionAnswer{{topic: "t", partition: 7, err: sarama.ErrNotLeaderForPartition, hwm: -1, preferredReplica: -1}}, a.partitions...)
		ours, err := decodeFetchResponse(encodeAnswer(a, parts, v), v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if r := scanAnswer(ours.partition("t", 7), &fetchWant{topic: "t", partition: 7, limit: 10}); !errors.Is(r.err, sarama.ErrNotLeaderForPartition) {
			t.Fatalf("v%d: errored partition answers %v", v, r.err)
		}
		if r := scanAnswer(ours.partition("t", 0), &fetchWant{topic: "t", partition: 0, limit: 100}); r.err != nil || r.messages() != 10 {
			t.Fatalf("v%d: the other partition answers %d messages, err %v", v, r.messages(), r.err)
		}
	}
}

// A batch whose CRC does not match fails its partition (sarama fails the
// whole response), and the others read on.
func TestDecodeCorruptBatchFailsOnlyItsPartition(t *testing.T) {
	v := int16(12)
	resp := responseShapes()["partition errors"]
	resp.Blocks["t"][5] = fetchResponse(0, partitionSpec{topic: "t", partition: 5, hwm: 10, batches: []batchSpec{{first: 0, deltas: seq(3)}}}).Blocks["t"][5]
	a, err := decodeFetchResponse(encodeWithSarama(t, resp, v), v)
	if err != nil {
		t.Fatal(err)
	}
	p := a.partition("t", 5)
	p.records[len(p.records)-1] ^= 0xff
	if r := scanAnswer(p, &fetchWant{topic: "t", partition: 5, limit: 10}); !errors.Is(r.err, errMalformedRecords) {
		t.Fatalf("corrupt batch answers %v", r.err)
	}
	if r := scanAnswer(a.partition("u", 2), &fetchWant{topic: "u", partition: 2, offset: 20, limit: 10}); r.err != nil || r.messages() != 5 {
		t.Fatalf("the other partition answers %d messages, err %v", r.messages(), r.err)
	}
}

// FuzzDecodeFetchResponse: the decoder never panics, and where sarama
// accepts a response, it answers every want as the old path does.
func FuzzDecodeFetchResponse(f *testing.F) {
	for _, v := range fetchVersions {
		for _, resp := range responseShapes() {
			body := encodeWithSarama(f, resp, v)
			f.Add(uint8(v), body)
			for _, cut := range trailingCuts(f, body, v) {
				f.Add(uint8(v), cut)
			}
		}
	}
	// Bounded, so that a fuzzed compressed batch does not inflate without
	// end (sarama's decoder and ours both hold it), nor into so many
	// records that comparing every want takes longer than the fuzzer's
	// hang limit.
	limit := sarama.MaxDecompressedBatchSize
	sarama.MaxDecompressedBatchSize = 16 << 10
	f.Cleanup(func() { sarama.MaxDecompressedBatchSize = limit })
	oracles := map[int16]*saramaOracle{}
	for _, v := range fetchVersions {
		oracles[v] = newSaramaOracle(f, v)
	}
	f.Fuzz(func(t *testing.T, vb uint8, body []byte) {
		v := fetchVersions[int(vb)%len(fetchVersions)]
		checkAgainstSarama(t, oracles[v], body, v, false)
	})
}

// A compressed batch larger than sarama.MaxDecompressedBatchSize fails
// its partition with sarama's error (zstd: or with the decoder's, when the
// frame's window is larger than the limit, as sarama's decoder fails).
func TestDecodeHoldsMaxDecompressedBatchSize(t *testing.T) {
	limit := sarama.MaxDecompressedBatchSize
	t.Cleanup(func() { sarama.MaxDecompressedBatchSize = limit })
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		body := encodeWithSarama(t, responseShapes()["codec "+codec.String()], 12)
		sarama.MaxDecompressedBatchSize = 100
		a, err := decodeFetchResponse(body, 12)
		if err != nil {
			t.Fatal(err)
		}
		r := scanAnswer(a.partition("t", 0), &fetchWant{topic: "t", limit: 100})
		if !errors.Is(r.err, sarama.ErrDecompressedBatchTooLarge) && (codec != sarama.CompressionZSTD || r.err == nil) {
			t.Fatalf("%s: a batch over the limit answers %v", codec, r.err)
		}
		sarama.MaxDecompressedBatchSize = limit
	}
}

// A batch whose header under-states its last offset delta (sarama's mock
// broker writes 0 for a batch built record by record) must not send the
// next fetch back below a record kept, on our decoder's path as on
// sarama's (see TestScanNextIsAfterTheLastRecordKept).
func TestDecodedNextIsAfterTheLastRecordKept(t *testing.T) {
	recs := batchSpec{first: 5, deltas: seq(3)}.records()
	recs.RecordBatch.LastOffsetDelta = 0
	resp := fetchResponse(0)
	resp.AddError("t", 0, sarama.ErrNoError)
	block := resp.GetBlock("t", 0)
	block.HighWaterMarkOffset = 8
	block.RecordsSet = []*sarama.Records{recs}
	a, err := decodeFetchResponse(encodeWithSarama(t, resp, 12), 12)
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []int64{5, 6} { // the whole batch kept; records before the offset skipped
		r := scanAnswer(a.partition("t", 0), &fetchWant{topic: "t", offset: from, limit: math.MaxInt})
		if r.err != nil || r.next != 8 || r.messages() != int(8-from) {
			t.Errorf("from %d: next %d, %d messages, err %v; want next 8, %d messages", from, r.next, r.messages(), r.err, 8-from)
		}
	}
}

// A record with many headers does not make the messages made after it
// reserve as many headers each: a small batch (one record of 2000 empty
// headers, 4 KB, then 199 records without) is no allocation of megabytes.
func TestDecodedHeadersAllocateAsManyAsTheRecordsHold(t *testing.T) {
	recs := batchSpec{first: 0, deltas: seq(200)}.records()
	for range 2000 {
		recs.RecordBatch.Records[0].Headers = append(recs.RecordBatch.Records[0].Headers, &sarama.RecordHeader{Key: []byte{}})
	}
	resp := fetchResponse(0)
	resp.AddError("t", 0, sarama.ErrNoError)
	block := resp.GetBlock("t", 0)
	block.HighWaterMarkOffset = 200
	block.RecordsSet = []*sarama.Records{recs}
	body := encodeWithSarama(t, resp, 12)
	a, err := decodeFetchResponse(body, 12)
	if err != nil {
		t.Fatal(err)
	}
	r := scanAnswer(a.partition("t", 0), &fetchWant{topic: "t", offset: 0, limit: math.MaxInt})
	if r.err != nil || r.unparsed == nil {
		t.Fatalf("scan: %v", r.err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	msgs, _ := r.unparsed.take(nil, slabMessages)
	runtime.ReadMemStats(&after)
	if len(msgs) == 0 || len(msgs[0].Headers) != 2000 {
		t.Fatalf("%d messages", len(msgs))
	}
	// the messages' slab (32 KiB) and 2000 headers (about 112 KB)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("making %d messages of a %d-byte response allocated %d bytes", len(msgs), len(body), alloc)
	}
}
