package fetch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// After a batch that reached the partition's high-water mark the feed's
// next fetch long-polls: a busy fetch would only come back empty, after
// queueing in a busy round beside the first fetches of a rebalance. After
// a batch that left records below the mark it is busy, as before.
func TestBatchFeedLongPollsOnceItReachedTheMark(t *testing.T) {
	for _, c := range []struct {
		name string
		hwm  int64 // of the first answer, which holds offsets 0 and 1
		want []bool
	}{
		{name: "reached", hwm: 2, want: []bool{true, false}},
		{name: "below", hwm: 5, want: []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var busy []bool
			second := make(chan struct{})
			fetch := func(ctx context.Context, isBusy bool, offset int64, _ int32) fetchResult {
				mu.Lock()
				busy = append(busy, isBusy)
				n := len(busy)
				mu.Unlock()
				if n == 1 {
					return fetchResult{next: 2, hwm: c.hwm, msgs: []*sarama.ConsumerMessage{
						{Topic: "t", Offset: 0}, {Topic: "t", Offset: 1}}}
				}
				if n == 2 {
					close(second)
				}
				<-ctx.Done()
				return fetchResult{err: ctx.Err()}
			}
			ctx, cancel := context.WithCancel(context.Background())
			feed := newBatchFeed(ctx, fetch, nil, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
			defer func() { cancel(); _ = feed.stop() }()
			select {
			case b := <-feed.batches:
				feed.taken(b)
				feed.handedOut()
			case <-time.After(5 * time.Second):
				t.Fatal("no batch in 5 s")
			}
			select {
			case <-second:
			case <-time.After(5 * time.Second):
				t.Fatal("no second fetch in 5 s")
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(busy, c.want) {
				t.Fatalf("fetches busy %v, want %v (the second a long poll once the batch reached the mark)", busy, c.want)
			}
		})
	}
}
