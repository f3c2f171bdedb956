package fetch

import (
	"fmt"
	"math"
	"testing"

	"github.com/IBM/sarama"
)

// A batch feed's Source makes an answer's messages a slab at a time as it
// hands them out: taken in pieces, they are the messages parsed at once,
// in order, and what they hold is what the feed budget counted for them
// before any was made.
func TestUnparsedRecordsTakenInPiecesAreTheParsedMessages(t *testing.T) {
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: 1000}
	add := func(first int64, n int, control bool) {
		batch := &sarama.RecordBatch{FirstOffset: first, LastOffsetDelta: int32(n - 1), Control: control}
		for i := range n {
			rec := &sarama.Record{OffsetDelta: int64(i), Value: fmt.Appendf(nil, "v%d", first+int64(i))}
			if i%3 == 0 {
				rec.Key = []byte("k")
				rec.Headers = []*sarama.RecordHeader{{Key: []byte("h"), Value: []byte("hv")}}
			}
			batch.Records = append(batch.Records, rec)
		}
		block.RecordsSet = append(block.RecordsSet, &sarama.Records{RecordBatch: batch})
	}
	add(0, 10, false)
	add(10, 1, true) // a control batch: no message
	add(11, 2*slabMessages+5, false)
	want := parseRecords(block, &fetchWant{topic: "t", partition: 2, offset: 4, limit: math.MaxInt})
	if want.err != nil || len(want.msgs) != 6+2*slabMessages+5 {
		t.Fatalf("parsed %d messages, err %v", len(want.msgs), want.err)
	}

	r := scanRecords(block, &fetchWant{topic: "t", partition: 2, offset: 4, limit: math.MaxInt})
	if r.err != nil || r.messages() != len(want.msgs) || r.next != want.next {
		t.Fatalf("scanned %d messages, next %d, err %v; want %d, next %d", r.messages(), r.next, r.err, len(want.msgs), want.next)
	}
	if held, counted := r.held(), heldBytes(want.msgs); held != counted {
		t.Fatalf("unparsed answer holds %d bytes, its messages %d", held, counted)
	}
	var got []*sarama.ConsumerMessage
	var held int64
	for r.unparsed.left() > 0 {
		var n int64
		before := len(got)
		if got, n = r.unparsed.take(got, 7); len(got) == before {
			t.Fatalf("take made nothing after %d of %d messages", before, r.unparsed.count())
		}
		held += n
	}
	if held != heldBytes(want.msgs) {
		t.Fatalf("taken messages hold %d bytes, want %d", held, heldBytes(want.msgs))
	}
	for i, m := range got {
		w := want.msgs[i]
		if m.Topic != w.Topic || m.Partition != w.Partition || m.Offset != w.Offset || string(m.Key) != string(w.Key) ||
			string(m.Value) != string(w.Value) || len(m.Headers) != len(w.Headers) {
			t.Fatalf("message %d: %+v, want %+v", i, m, w)
		}
	}
}

// A batch whose header under-states its last offset delta (sarama's mock
// broker writes 0 for a batch built record by record) must not move the
// next fetch below a record already kept: the next fetch would hand the
// batch's later records out a second time, going backwards. The next
// offset is after the last record kept, or the header's end if later.
func TestScanNextIsAfterTheLastRecordKept(t *testing.T) {
	batch := &sarama.RecordBatch{FirstOffset: 5, LastOffsetDelta: 0}
	for i := range 3 {
		batch.Records = append(batch.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte("v")})
	}
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: 8, RecordsSet: []*sarama.Records{{RecordBatch: batch}}}
	for _, from := range []int64{5, 6} { // the whole batch kept; records before the offset skipped
		r := scanRecords(block, &fetchWant{topic: "t", offset: from, limit: math.MaxInt})
		if r.err != nil || r.next != 8 || r.messages() != int(8-from) {
			t.Errorf("from %d: next %d, %d messages, err %v; want next 8, %d messages", from, r.next, r.messages(), r.err, 8-from)
		}
	}
}
