package consumergroup

import (
	"context"
	"testing"
	"time"
)

// A partition whose leader holds offsets 0 to 2 of a log of 1,000: the
// first fetch returns them, later ones wait for the feed to stop.
func backlogFetch(ctx context.Context, _ bool, offset int64, _ int32) fetchResult {
	if offset > 0 {
		<-ctx.Done()
		return fetchResult{err: ctx.Err()}
	}
	msgs := prefixOf(0, 1, 2)
	for _, m := range msgs {
		m.Value = []byte("0123456789")
	}
	return fetchResult{msgs: msgs, next: 3, hwm: 1000}
}

// pump over a feed: the worker's high-water mark is the fetch response's
// (lag counts the backlog, not just the batch), and once the batch is
// handed out its bytes are back in the group's budget: what is left is at
// most the fetch size the feed reserved for its next fetch, if it fetched
// ahead while the batch was still going out.
func TestIntegrationFedPumpHighWaterMarkAndBudget(t *testing.T) {
	f := newPumpFixture(t, 8)
	budget := newFeedBudget(1 << 20)
	feed := newBatchFeed(f.w.ctx, backlogFetch, nil, &f.w.hwm, 1000, 0, budget, 0)
	res := f.runFrom(fedConsumer(feed), nil, 0)
	receive(t, f.out, 0)
	receive(t, f.out, 1)
	receive(t, f.out, 2)
	if got := f.w.hwm.Load(); got != 1000 {
		t.Errorf("high-water mark %d after the batch, want the response's 1000", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		budget.mu.Lock()
		used, held := budget.used, feed.hold.held
		budget.mu.Unlock()
		if used == held && (held == 0 || held == 1000) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("budget used %d, feed holds %d after the batch went out; want 0 or the 1000 reserved ahead", used, held)
		}
		time.Sleep(time.Millisecond)
	}
	f.w.stop(false)
	if r := await(t, res); !r.ended || r.e != eventStop {
		t.Fatalf("pump = %+v, want to end with stop", r)
	}
	if err := feed.stop(); err != nil {
		t.Fatalf("feed ended with %v", err)
	}
}
