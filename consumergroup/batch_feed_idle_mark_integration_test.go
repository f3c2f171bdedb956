package consumergroup

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestIntegrationIdleFeedHighWaterMark: a partition whose committed
// offset is its log end (1000: caught up, nothing to hand out). sarama's
// partition consumer knows the mark from the moment it opens, so with
// Fetch.Batches false the worker's mark, the claim's HighWaterMarkOffset()
// and the lag gauge say 1000 / 0 at once. The feed's long polls carry the
// mark too (1000 here): the feed sets the worker's mark from each answer
// (startBatchFeed gives it the worker's), and pump, handing out nothing,
// leaves it.
func TestIntegrationIdleFeedHighWaterMark(t *testing.T) {
	f := newPumpFixture(t, 8)
	var fetches atomic.Int32
	idle := func(ctx context.Context, _ bool, offset int64, _ int32) fetchResult {
		fetches.Add(1)
		select { // a long poll that ends without data
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return fetchResult{err: ctx.Err()}
		}
		return fetchResult{next: offset, hwm: 1000}
	}
	feed := newBatchFeed(f.w.ctx, idle, nil, &f.w.hwm, 1000, 0, newFeedBudget(1<<20), 1000)
	res := f.runFrom(fedConsumer(feed), nil, 1000)
	deadline := time.Now().Add(5 * time.Second)
	for fetches.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := f.w.hwm.Load()
	f.w.stop(false)
	await(t, res)
	feed.stop()
	if got != 1000 {
		t.Fatalf("after %d long polls answered with a high-water mark of 1000, the worker's mark (HighWaterMarkOffset(), lag) is %d; sarama's partition consumer reports 1000 from its open", fetches.Load(), got)
	}
}
