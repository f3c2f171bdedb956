package fetch

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
)

// Kafka gives its "at least one record batch" allowance to the first
// partition of a round with any bytes to return, and an empty record batch
// (a compacted topic keeps an idempotent producer's last batch, all of its
// records removed) is such bytes: once it went out, a partition whose
// first batch is larger than its fetch size (Consumer.Fetch.Default) comes
// back with no records at all. sarama's decoder drops the empty batch, so
// answer sees a round in which nobody got records: each partition then
// gets a round of its own, where the oversized one comes back partial (its
// fetch size then grows) instead of being answered errNoRecordsBelowMark
// and sent to sarama's partition consumer, as first built.
//
// The broker here answers the round of partitions 0 and 1 as Kafka does
// when partition 0 holds an empty batch and partition 1 a batch larger
// than its fetch size, and a round of partition 1 alone with its batch.
func TestFetcherOversizedBatchBesideEmptyBatchFetchedAlone(t *testing.T) {
	both := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	both.AddRecordBatch("t", 0, nil, sarama.StringEncoder("compacted away"), 0, 0, false)
	empty := both.GetBlock("t", 0).RecordsSet[0].RecordBatch
	empty.Records = nil // the cleaner removed them all; the batch stays
	empty.LastOffsetDelta = 4
	both.GetBlock("t", 0).HighWaterMarkOffset = 5
	both.AddError("t", 1, sarama.ErrNoError) // its first batch is larger than its fetch size
	both.GetBlock("t", 1).HighWaterMarkOffset = 5
	alone := starvedResponse([]int32{1}, nil) // partition 1 alone: its batch, whole
	f, broker := starvedFetcher(t, both, alone)
	got, rounds := runRound(t, f, broker, 0, 1)
	if r := got[1]; r.err != nil || len(r.msgs) == 0 {
		t.Fatalf("partition 1: %d messages, err %v after %d round(s); want its batch (a round of its own returns it): "+
			"errNoRecordsBelowMark (%v) sends its feed to sarama's partition consumer",
			len(got[1].msgs), got[1].err, rounds, errors.Is(got[1].err, errNoRecordsBelowMark))
	}
}
