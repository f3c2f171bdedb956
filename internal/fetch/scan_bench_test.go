package fetch

import (
	"math"
	"testing"
)

// BenchmarkScanAnswers measures the round's loop scanning a realistic
// answer without making its messages, and the feed counting what each
// partition's share holds as it arrives: 4 partitions of 4 batches of 500
// small records, one want starting mid-batch (its first batch walked
// record by record), through sarama's decoder's blocks and through this
// package's decoder (its batches' CRCs and records checked as they are
// scanned). Run:
//
//	go test -run=NONE -bench=ScanAnswers -benchmem ./internal/fetch/
func BenchmarkScanAnswers(b *testing.B) {
	const partitions, batches, perBatch = 4, 4, 500
	var parts []partitionSpec
	for p := range int32(partitions) {
		spec := partitionSpec{topic: "t", partition: p, hwm: batches * perBatch}
		for i := range batches {
			spec.batches = append(spec.batches, batchSpec{first: int64(i * perBatch), deltas: seq(perBatch)})
		}
		parts = append(parts, spec)
	}
	resp := fetchResponse(0, parts...)
	ours, err := decodeFetchResponse(encodeWithSarama(b, resp, 12), 12)
	if err != nil {
		b.Fatal(err)
	}
	var wants []*fetchWant
	for p := range int32(partitions) {
		w := &fetchWant{topic: "t", partition: p, limit: math.MaxInt}
		if p == partitions-1 {
			w.offset = perBatch / 2
		}
		wants = append(wants, w)
	}
	scans := map[string]func(w *fetchWant) fetchResult{
		"sarama":  func(w *fetchWant) fetchResult { return scanRecords(resp.GetBlock(w.topic, w.partition), w) },
		"decoded": func(w *fetchWant) fetchResult { return scanAnswer(ours.partition(w.topic, w.partition), w) },
	}
	for _, name := range []string{"sarama", "decoded"} {
		scan := scans[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, w := range wants {
					if r := scan(w); r.err != nil || int64(r.messages()) != batches*perBatch-w.offset || r.held() == 0 {
						b.Fatalf("%s/%d: %d messages, err %v", w.topic, w.partition, r.messages(), r.err)
					}
				}
			}
		})
	}
}
