package fetch

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// BenchmarkParseRecords measures turning a decoded fetch answer into the
// messages a batch feed hands out: 4 record batches of 5,000 small
// records, as the bench's producer writes them. Run:
//
//	go test -run=NONE -bench=ParseRecords -benchmem ./internal/fetch/
func BenchmarkParseRecords(b *testing.B) {
	const batches, perBatch = 4, 5000
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: batches * perBatch}
	for i := range batches {
		batch := &sarama.RecordBatch{FirstOffset: int64(i * perBatch), LastOffsetDelta: perBatch - 1, FirstTimestamp: time.Now()}
		for j := range perBatch {
			batch.Records = append(batch.Records, &sarama.Record{OffsetDelta: int64(j), Value: fmt.Appendf(nil, "message %d", i*perBatch+j)})
		}
		block.RecordsSet = append(block.RecordsSet, &sarama.Records{RecordBatch: batch})
	}
	w := &fetchWant{topic: "t", partition: 0, offset: 0, limit: 1 << 30}
	b.ReportAllocs()
	for b.Loop() {
		if r := parseRecords(block, w); r.err != nil || len(r.msgs) != batches*perBatch {
			b.Fatalf("%d messages, err %v", len(r.msgs), r.err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batches*perBatch), "ns/msg")
}
