package fetch

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

// testPartition is a Partition of t/0 in an engine with sarama's default
// config and no Kafka behind it, fetching until the test ends.
func testPartition(t *testing.T, mark *atomic.Int64) *Partition {
	e := NewEngine(Config{Config: sarama.NewConfig()}, Deps{})
	t.Cleanup(e.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return e.Partition(ctx, "t", 0, mark, nil)
}

func prefixOf(offsets ...int64) []*sarama.ConsumerMessage {
	var out []*sarama.ConsumerMessage
	for _, o := range offsets {
		out = append(out, &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o})
	}
	return out
}

// next takes the source's next message, which must be at offset want.
func next(t *testing.T, src Source, want int64) {
	t.Helper()
	wake := make(chan struct{})
	timer := time.AfterFunc(5*time.Second, func() { close(wake) })
	defer timer.Stop()
	m, err := src.Next(wake)
	switch {
	case err != nil:
		t.Fatalf("offset %d: the source ended (%v)", want, err)
	case m == nil:
		t.Fatalf("offset %d never came", want)
	case m.Offset != want:
		t.Fatalf("got offset %d, want %d", m.Offset, want)
	}
}

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

// A feed's Source: the partition's high-water mark is the fetch
// response's (lag counts the backlog, not just the batch), and once the
// batch is handed out its bytes are back in the group's budget: what is
// left is at most the fetch size the feed reserved for its next fetch, if
// it fetched ahead while the batch was still going out.
func TestFeedSourceHighWaterMarkAndBudget(t *testing.T) {
	var mark atomic.Int64
	p := testPartition(t, &mark)
	budget := newFeedBudget(1 << 20)
	feed := newBatchFeed(p.ctx, backlogFetch, nil, &mark, 1000, 0, budget, 0)
	src := &feedSource{p: p, feed: feed}
	next(t, src, 0)
	next(t, src, 1)
	next(t, src, 2)
	if got := mark.Load(); got != 1000 {
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
	if err := src.Close(); err != nil {
		t.Fatalf("feed ended with %v", err)
	}
}

// failedFeedSource is a feed's Source of t/0 under ctx whose feed has
// ended with broken, not read by Next yet; reported holds what the engine
// reported, fallbacks what it counted. Run it in a synctest bubble.
func failedFeedSource(t *testing.T, ctx context.Context, broken error) (src *feedSource, reported *[]error, fallbacks *metrics.StandardCounter) {
	reported = new([]error)
	fallbacks = &metrics.StandardCounter{} // NewCounter counts nothing under UseNilMetrics
	e := NewEngine(Config{Config: sarama.NewConfig()}, Deps{
		Report:        func(err error) { *reported = append(*reported, err) },
		FeedFallbacks: fallbacks,
	})
	t.Cleanup(e.Close)
	var mark atomic.Int64
	p := e.Partition(ctx, "t", 0, &mark, nil)
	fetch := func(context.Context, bool, int64, int32) fetchResult { return fetchResult{err: broken} }
	feed := newBatchFeed(p.ctx, fetch, nil, &mark, 1000, 0, newFeedBudget(1<<20), 0)
	synctest.Wait() // the feed has ended: its error waits for Next
	return &feedSource{p: p, feed: feed}, reported, fallbacks
}

// A feed that ended with an error while its Source was being closed (a
// seek or a pause, before Next read the error) still reports its
// fallback: the next Open reads through sarama's partition consumer, and
// that is never silent.
func TestFeedSourceClosedAfterItsFeedFailedReportsTheFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		broken := errors.New("broken answer")
		src, reported, fallbacks := failedFeedSource(t, ctx, broken)
		if err := src.Close(); !errors.Is(err, broken) {
			t.Fatalf("Close returned %v, want the feed's error", err)
		}
		var fe *FallbackError
		if len(*reported) != 1 || !errors.As((*reported)[0], &fe) || !errors.Is(fe, broken) {
			t.Fatalf("reported %v, want one *FallbackError around the feed's error", *reported)
		}
		if n := fallbacks.Count(); n != 1 {
			t.Errorf("fallbacks counted %d, want 1", n)
		}
	})
}

// A feed that failed just as its partition was being stopped (the
// worker's context ended: a rebalance, Close) is not followed by any
// Open: nothing reads through sarama's partition consumer, so Close
// reports no fallback (a *FallbackError on Errors() and a counted
// fallback would say one happened).
func TestFeedSourceClosedWithItsPartitionReportsNoFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		src, reported, fallbacks := failedFeedSource(t, ctx, errors.New("broken answer"))
		cancel() // the partition stops (the worker's Stop): Next is not called again
		_ = src.Close()
		if len(*reported) != 0 || fallbacks.Count() != 0 {
			t.Fatalf("reported %v, %d fallbacks counted; want none: the partition is not read again", *reported, fallbacks.Count())
		}
	})
}
