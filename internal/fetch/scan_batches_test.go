package fetch

import (
	"math"
	"testing"
)

// A batch walked in part whose records' offsets do not rise (Kafka never
// writes one, a fuzzed answer may) sends the next fetch after the highest
// offset kept, not after the last one walked, through either decoder.
func TestScanNextIsAfterTheHighestRecordKept(t *testing.T) {
	resp := fetchResponse(0, partitionSpec{topic: "t", hwm: 20, batches: []batchSpec{{first: 10, deltas: []int64{0, 5, 3}}}})
	ours, err := decodeFetchResponse(encodeWithSarama(t, resp, 12), 12)
	if err != nil {
		t.Fatal(err)
	}
	w := &fetchWant{topic: "t", offset: 11, limit: math.MaxInt}
	for name, r := range map[string]fetchResult{
		"sarama":  scanRecords(resp.GetBlock("t", 0), w),
		"decoded": scanAnswer(ours.partition("t", 0), w),
	} {
		// offsets 15 and 13 kept; the header ends at 14
		if r.err != nil || r.messages() != 2 || r.next != 16 {
			t.Errorf("%s: %d messages, next %d, err %v; want 2 messages, next 16", name, r.messages(), r.next, r.err)
		}
	}
}
