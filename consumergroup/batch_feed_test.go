package consumergroup

import (
	"testing"

	"github.com/IBM/sarama"
)

// A fetched batch carries its response's high-water mark to the worker, so
// lag and the handler claim's HighWaterMarkOffset count the backlog behind
// the batch, not just the batch.
func TestBatchFeedCarriesHighWaterMark(t *testing.T) {
	batch := &sarama.RecordBatch{FirstOffset: 10, LastOffsetDelta: 2}
	for i := range 3 {
		batch.Records = append(batch.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte{byte(i)}})
	}
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: 5000, RecordsSet: []*sarama.Records{{RecordBatch: batch}}}
	r := parseRecords(block, &fetchWant{topic: "t", partition: 0, offset: 10, limit: 100})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.hwm != 5000 {
		t.Fatalf("fetch result high-water mark %d, want the response's 5000", r.hwm)
	}
	w := &partitionWorker{}
	w.hwm.Store(9)
	msgs := w.takeBatch(r)
	if len(msgs) != 3 || msgs[0].Offset != 10 {
		t.Fatalf("batch handed on as %d messages", len(msgs))
	}
	if got := w.hwm.Load(); got != 5000 {
		t.Fatalf("worker high-water mark %d after the batch, want 5000", got)
	}
	// A later response's mark replaces it, also a lower one (a truncated
	// log); a response without one leaves it.
	w.takeBatch(fetchResult{msgs: msgs, hwm: 4000})
	if got := w.hwm.Load(); got != 4000 {
		t.Fatalf("worker high-water mark %d, want 4000", got)
	}
	w.takeBatch(fetchResult{msgs: msgs})
	if got := w.hwm.Load(); got != 4000 {
		t.Fatalf("a response without a mark changed it to %d", got)
	}
}
