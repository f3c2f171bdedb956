package fetch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestFeedSourceIdleHighWaterMark: a partition whose committed offset is
// its log end (1000: caught up, nothing to hand out). sarama's partition
// consumer knows the mark from the moment it opens, so with Fetch.Batches
// false the partition's mark (the claim's HighWaterMarkOffset(), the lag
// gauge) says 1000 / 0 at once. The feed's long polls carry the mark too
// (1000 here): the feed sets the partition's mark from each answer, while
// its reader, handed nothing, waits.
func TestFeedSourceIdleHighWaterMark(t *testing.T) {
	var mark atomic.Int64
	p := testPartition(t, &mark)
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
	src := &feedSource{p: p, feed: newBatchFeed(p.ctx, idle, nil, &mark, 1000, 0, newFeedBudget(1<<20), 1000)}
	wake := make(chan struct{})
	waited := make(chan error, 1)
	go func() {
		m, err := src.Next(wake)
		if m != nil {
			t.Errorf("an idle feed handed out offset %d", m.Offset)
		}
		waited <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for fetches.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := mark.Load()
	close(wake)
	if err := <-waited; err != nil {
		t.Errorf("Next woken = %v, want nil", err)
	}
	_ = src.Close()
	if got != 1000 {
		t.Fatalf("after %d long polls answered with a high-water mark of 1000, the partition's mark (HighWaterMarkOffset(), lag) is %d; sarama's partition consumer reports 1000 from its open", fetches.Load(), got)
	}
}
