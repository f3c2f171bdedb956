package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestBatchFeedStepsOverAnEmptyBatch: a record batch whose records were all
// compacted away (Kafka keeps the last batch of each producer, empty) holds
// no record, but its last offset delta says where it ends. The feed steps
// over it and reads on from there, as sarama's partition consumer does,
// instead of ending with errNoRecordsBelowMark and handing the partition
// to sarama's partition consumer for the rest of its pass.
func TestBatchFeedStepsOverAnEmptyBatch(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	empty := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	empty.SetLastOffsetDelta("t", 0, 2) // one empty batch: offsets 0..2 compacted away
	empty.GetBlock("t", 0).HighWaterMarkOffset = 5
	after := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	after.AddRecordBatch("t", 0, nil, sarama.StringEncoder("kept"), 3, 0, false)
	after.GetBlock("t", 0).HighWaterMarkOffset = 5
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockSequence(empty, after),
	})
	cg := mockFetchGroup(t, broker)
	busy := newRoundFetcher(cg)
	idle := newRoundFetcher(cg)
	idle.longPoll, idle.own = true, newOwnConns(idle.env)
	defer idle.closeConns()

	var mu sync.Mutex
	var offsets []int64
	fetchFrom := feedFetch(busy, idle, "t", 0, func() {})
	fetch := func(ctx context.Context, isBusy bool, offset int64, size int32) fetchResult {
		mu.Lock()
		offsets = append(offsets, offset)
		mu.Unlock()
		return fetchFrom(ctx, isBusy, offset, size)
	}
	feed := newBatchFeed(context.Background(), fetch, nil, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
	defer feed.stop()
	select {
	case r := <-feed.batches:
		r.parse() // as its Source makes them
		if r.err != nil || len(r.msgs) != 1 || r.msgs[0].Offset != 3 {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the feed passed on %d messages and error %v (fetched offsets %v), want the message at 3, after the empty batch",
				len(r.msgs), r.err, offsets)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed passed nothing on in 5 s")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offsets) < 2 || offsets[0] != 0 || offsets[1] != 3 {
		t.Fatalf("fetched offsets %v, want 0, then 3 (past the empty batch), then on", offsets)
	}
}
