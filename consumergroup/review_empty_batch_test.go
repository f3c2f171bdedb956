//go:build review

package consumergroup

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// REVIEW: a record batch whose records were all compacted away (Kafka keeps
// the last batch of each producer for its state, empty) is dropped by
// sarama's decoder from RecordsSet (n == 0), so parseRecords never moves
// next past it. sarama's partition consumer moves past it with the block's
// recordsNextOffset; the feed fetches the same offset again and again.
func TestReviewFeedMovesPastEmptyBatch(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: 5}
	res.SetLastOffsetDelta("t", 0, 2) // one empty batch: offsets 0..2 compacted away
	res.GetBlock("t", 0).HighWaterMarkOffset = 3
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	cg := mockFetchGroup(t, broker)
	busy := newFirstFetcher(cg)
	idle := newFirstFetcher(cg)
	idle.longPoll, idle.ownConns = true, true
	defer idle.closeConns()

	var mu sync.Mutex
	var offsets []int64
	fetch := func(ctx context.Context, isBusy bool, offset int64, size int32) fetchResult {
		mu.Lock()
		offsets = append(offsets, offset)
		mu.Unlock()
		f := busy
		if !isBusy {
			f = idle
		}
		return f.fetchSized(ctx, "t", 0, offset, math.MaxInt, size)
	}
	feed := newBatchFeed(context.Background(), fetch, 1<<20, 0, newFeedBudget(1<<26), 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(offsets)
		mu.Unlock()
		if n >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := feed.stop(); err != nil {
		t.Fatalf("feed ended with %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range offsets {
		if o >= 3 {
			return
		}
	}
	t.Fatalf("the feed fetched offset 0 %d times (every answer returned at once) and never moved past the empty batch to 3", len(offsets))
}
