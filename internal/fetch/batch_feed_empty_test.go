package fetch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestBatchFeedEndsBelowAnEmptyBatch: a record batch whose records were all
// compacted away (Kafka keeps the last batch of each producer, empty) is
// dropped by sarama's decoder, and with it where it ends, so a direct fetch
// cannot step past it. The feed ends with errNoRecordsBelowMark after one
// fetch (pump then falls back to sarama's partition consumer, which steps
// past it) instead of fetching the same offset in a hot loop: the long
// poll is answered at once, the empty batch meeting MinBytes.
func TestBatchFeedEndsBelowAnEmptyBatch(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.SetLastOffsetDelta("t", 0, 2) // one empty batch: offsets 0..2 compacted away
	res.GetBlock("t", 0).HighWaterMarkOffset = 3
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	cg := mockFetchGroup(t, broker)
	busy := newRoundFetcher(cg)
	idle := newRoundFetcher(cg)
	idle.longPoll, idle.ownConns = true, true
	defer idle.closeConns()

	var mu sync.Mutex
	var offsets []int64
	fetchFrom := feedFetch(busy, idle, "t", 0)
	fetch := func(ctx context.Context, isBusy bool, offset int64, size int32) fetchResult {
		mu.Lock()
		offsets = append(offsets, offset)
		mu.Unlock()
		return fetchFrom(ctx, isBusy, offset, size)
	}
	feed := newBatchFeed(context.Background(), fetch, nil, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
	select {
	case r := <-feed.batches:
		if !errors.Is(r.err, errNoRecordsBelowMark) || len(r.msgs) != 0 {
			t.Fatalf("the feed passed on %d messages and error %v, want none and %v", len(r.msgs), r.err, errNoRecordsBelowMark)
		}
	case <-time.After(5 * time.Second):
		feed.stop()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the feed fetched offset 0 %d times in 5 s and passed nothing on", len(offsets))
	}
	if err := feed.stop(); !errors.Is(err, errNoRecordsBelowMark) {
		t.Fatalf("feed ended with %v, want %v", err, errNoRecordsBelowMark)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offsets) != 1 || offsets[0] != 0 {
		t.Fatalf("fetched offsets %v, want one fetch at 0", offsets)
	}
}
