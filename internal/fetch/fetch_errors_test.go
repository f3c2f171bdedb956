package fetch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// reportRecorder is a Deps.Report that keeps what it is given.
type reportRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *reportRecorder) report(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *reportRecorder) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// fallbackSource is a feed's Source of t/0 from offset 0 whose first fetch
// returns offsets 0 to 2 and every later one fails with err, retried (up
// to limit times in a row) by a retry that waits nothing.
func fallbackSource(t *testing.T, err error, limit int) (Source, *reportRecorder) {
	rec := &reportRecorder{}
	e := NewEngine(Config{Config: sarama.NewConfig()}, Deps{Report: rec.report})
	t.Cleanup(e.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := e.Partition(ctx, "t", 0, nil, nil)
	fetch := func(_ context.Context, _ bool, offset int64, _ int32) fetchResult {
		if offset == 0 {
			return fetchResult{msgs: prefixOf(0, 1, 2), next: 3, hwm: 10}
		}
		return fetchResult{err: err}
	}
	retry := &feedRetry{refresh: func() {}, backoff: func(int) time.Duration { return 0 }, limit: limit}
	feed := newBatchFeed(p.ctx, fetch, retry, nil, 1000, 0, newFeedBudget(1<<20), 0)
	return newTestFeedSource(p, feed, retry, 0), rec
}

// A feed that ends hands its partition to sarama's partition consumer: the
// application learns it on Errors() as a *FallbackError inside a
// *sarama.ConsumerError, naming the offset the partition goes on from and
// the cause; when the cause is a retriable error that failed every retry,
// a *RetriesExhaustedError says so. Before, a fallback was logged at Info
// and exhausted retries only counted.
func TestFeedFallbackReported(t *testing.T) {
	for _, c := range []struct {
		err       error
		exhausted bool
	}{
		{sarama.ErrNotLeaderForPartition, true},
		{errNoRecordsBelowMark, false},
	} {
		src, rec := fallbackSource(t, c.err, 3)
		next(t, src, 0)
		next(t, src, 1)
		next(t, src, 2)
		wake := make(chan struct{})
		timer := time.AfterFunc(5*time.Second, func() { close(wake) })
		if _, err := src.Next(wake); !errors.Is(err, ErrSourceEnded) {
			t.Fatalf("%v: Next after the failing fetches returned %v, want ErrSourceEnded", c.err, err)
		}
		timer.Stop()
		_ = src.Close()
		errs := rec.all()
		if len(errs) != 1 {
			t.Fatalf("%v: %d errors reported (%v), want the fallback", c.err, len(errs), errs)
		}
		checkFallbackReport(t, errs[0], c.err, c.exhausted, 3)
	}
}

// newTestFeedSource is a feed's Source of p over feed, retried by retry,
// from offset from.
func newTestFeedSource(p *Partition, feed *batchFeed, retry *feedRetry, from int64) Source {
	return &feedSource{p: p, feed: feed, retry: retry, next: from}
}

// checkFallbackReport checks that err, reported for t/0, is a
// *sarama.ConsumerError around a *FallbackError at offset, caused by cause,
// through a *RetriesExhaustedError when exhausted.
func checkFallbackReport(t *testing.T, err, cause error, exhausted bool, offset int64) {
	t.Helper()
	var ce *sarama.ConsumerError
	if !errors.As(err, &ce) || ce.Topic != "t" || ce.Partition != 0 {
		t.Fatalf("%v: reported %T %v, want a *sarama.ConsumerError for t/0", cause, err, err)
	}
	var fb *FallbackError
	if !errors.As(err, &fb) || fb.Topic != "t" || fb.Partition != 0 || fb.Offset != offset {
		t.Fatalf("%v: reported %v, want a *FallbackError for t/0 at %d", cause, err, offset)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("reported %v, which does not wrap the cause %v", err, cause)
	}
	var ex *RetriesExhaustedError
	if got := errors.As(err, &ex); got != exhausted {
		t.Fatalf("%v: reported %v; a *RetriesExhaustedError in it: %v, want %v", cause, err, got, exhausted)
	}
	if exhausted && (ex.Retries != 3 || ex.Offset != offset) {
		t.Fatalf("%v: %+v, want 3 retries at %d", cause, ex, offset)
	}
}
