package fetch

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// batchFeed fetches a partition's batches in the background, from one
// offset on, and passes each on whole: while its Source hands one batch
// out, the next one is fetched (unbuffered: at most one batch waits). See
// docs/batch-feed.md.
type batchFeed struct {
	batches chan fetchResult // a batch with messages, or the error that ended the feed
	cancel  context.CancelFunc
	done    chan struct{} // closed when the feed's goroutine returns
	err     error         // the error that ended the feed, once done is closed

	// fetch fetches at offset, with a partition fetch size of size bytes:
	// answered at once (busy) or long-polled.
	fetch func(ctx context.Context, busy bool, offset int64, size int32) fetchResult
	// retry decides whether a failed fetch is tried again (nil: never).
	retry *feedRetry
	// mark is the partition's high-water mark (nil: none), set from every
	// answer (see run).
	mark *atomic.Int64
	// sizes: Consumer.Fetch.Default, and Consumer.Fetch.Max (0: no cap).
	fetchDefault, fetchMax int32

	budget  *feedBudget // the group's, shared by every feed
	hold    feedHold    // what this feed holds of budget
	current int64       // bytes of the batch its Source hands out; the Source's

	detachTimer *time.Timer // handOver's wait for a slow reader (nil until first used)

	// notBack, when set, is told that the feed will not fetch again soon:
	// its Source did not take a batch at once (its reader is busy), or the
	// feed ended. The idle fetcher then stops waiting for it (see
	// long_poll_returns.go).
	notBack func()
}

// newBatchFeed starts a feed fetching with fetch from offset from on, until
// ctx ends or the feed is stopped. A fetch that fails is tried again as
// retry says (nil: never); otherwise the error ends the feed. Every answer's
// high-water mark goes to mark (nil: nowhere).
func newBatchFeed(ctx context.Context, fetch func(context.Context, bool, int64, int32) fetchResult,
	retry *feedRetry, mark *atomic.Int64, fetchDefault, fetchMax int32, budget *feedBudget, from int64) *batchFeed {
	return startBatchFeed(ctx, fetch, retry, mark, fetchDefault, fetchMax, budget, from, nil)
}

// startBatchFeed is newBatchFeed telling notBack (nil: nobody) when the
// feed will not fetch again soon (see batchFeed.notBack).
func startBatchFeed(ctx context.Context, fetch func(context.Context, bool, int64, int32) fetchResult,
	retry *feedRetry, mark *atomic.Int64, fetchDefault, fetchMax int32, budget *feedBudget, from int64, notBack func()) *batchFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &batchFeed{
		batches: make(chan fetchResult), cancel: cancel, done: make(chan struct{}),
		fetch: fetch, retry: retry, mark: mark, fetchDefault: fetchDefault, fetchMax: fetchMax, budget: budget,
		notBack: notBack,
	}
	go f.run(ctx, from)
	return f
}

// run fetches from next on until ctx ends or an error ends the feed:
// busy after a batch with messages below the high-water mark, long-polled
// after an empty answer or one that reached the mark;
// within the group's byte budget; a batch larger than the fetch size again
// with the size doubled; errors retrying mends again at the same offset;
// an offset out of range at a position read through ends the feed with a
// *TruncationError or a *RetentionError, or is retried when the log holds
// it after all. Every answer's high-water mark becomes the partition's
// mark. See docs/batch-feed.md, "The feed's loop" and "Out of range
// mid-stream".
func (f *batchFeed) run(ctx context.Context, next int64) {
	defer close(f.done)
	defer f.tellNotBack()
	busy := true
	size := f.fetchDefault
	for {
		reserved, ok := f.budget.reserve(ctx, &f.hold, int64(size))
		if !ok {
			return
		}
		r := f.fetch(ctx, busy, next, size)
		if ctx.Err() != nil {
			return
		}
		r.err = f.retry.explain(ctx, next, r.err) // an offset out of range read through: lost, or a stale answer
		if ctx.Err() != nil {
			return
		}
		r.bytes = r.held()
		f.budget.settle(&f.hold, reserved, r.bytes)
		if errors.Is(r.err, errPartialBatch) {
			if grown, ok := grownFetchSize(size, f.fetchMax); ok {
				size, busy = grown, true
				continue
			}
		}
		if r.err != nil && f.retry.again(ctx, r.err) {
			busy = true // the next fetch is answered at once
			continue
		}
		if ctx.Err() != nil {
			return // stopped during a retry's backoff: not the feed's error
		}
		if r.err != nil {
			f.err = r.err
			select {
			case f.batches <- r:
			case <-ctx.Done():
			}
			return
		}
		// Only an answer holding the partition (a high-water mark) says
		// its log holds next: a throttle, or a want moved away
		// maxMovesPerFetch times, holds none.
		reached := int64(-1)
		if r.hwm > 0 {
			reached = max(next, r.next)
		}
		f.retry.succeeded(reached)
		if f.mark != nil && r.hwm > 0 {
			f.mark.Store(r.hwm)
		}
		next = max(next, r.next)
		if r.messages() == 0 {
			busy = false
			if r.throttle > 0 && !sleepCtx(ctx, r.throttle) {
				return // throttled by a quota: hold back, as asked
			}
			continue // the long poll ended without messages
		}
		// A batch that reached the high-water mark leaves nothing to read
		// at once: the next fetch long-polls rather than coming back empty
		// from a busy round, where it would queue beside first fetches.
		busy = !reachedMark(r, next)
		size = f.fetchDefault
		if !f.handOver(ctx, &r) {
			return
		}
	}
}

// handOver passes r to the feed's Source, and copies its messages out of a
// shared response while it waits longer than detachAfter for a slow reader
// (see detach.go). It returns false when ctx ends first.
func (f *batchFeed) handOver(ctx context.Context, r *fetchResult) bool {
	select {
	case f.batches <- *r:
		return true
	default:
		f.tellNotBack() // the reader is busy: the next fetch waits for it
	}
	if r.shared {
		if f.detachTimer == nil {
			f.detachTimer = time.NewTimer(detachAfter)
		} else {
			f.detachTimer.Reset(detachAfter)
		}
		select {
		case f.batches <- *r:
			f.detachTimer.Stop()
			return true
		case <-ctx.Done():
			f.detachTimer.Stop()
			return false
		case <-f.detachTimer.C:
			r.detach()
		}
	}
	select {
	case f.batches <- *r:
		return true
	case <-ctx.Done():
		return false
	}
}

// grownFetchSize returns the fetch size after one too small for a record
// batch: doubled, up to max (0: no cap), as sarama's partition consumer
// grows it. It returns false when size is max already: the batch can never
// be fetched (sarama's partition consumer then reports
// sarama.ErrMessageTooLarge and skips it).
func grownFetchSize(size, max int32) (int32, bool) {
	if max > 0 && size >= max {
		return size, false
	}
	grown := size * 2
	if grown <= 0 { // overflow
		grown = math.MaxInt32
	}
	if max > 0 && grown > max {
		grown = max
	}
	return grown, grown > size
}

// stop ends the feed and waits for its goroutine. It returns the error
// that ended the feed, if any.
func (f *batchFeed) stop() error {
	f.cancel()
	<-f.done
	f.budget.releaseAll(&f.hold)
	return f.err
}

// taken notes that the feed's Source took b to hand out.
func (f *batchFeed) taken(b fetchResult) { f.current = b.bytes }

// handedOut gives the bytes of the batch the Source took last back to
// the budget: its last message is handed out.
func (f *batchFeed) handedOut() {
	f.budget.release(&f.hold, f.current)
	f.current = 0
}

// reachedMark reports whether an answer r that moved the feed to next
// left nothing below the partition's high-water mark.
func reachedMark(r fetchResult, next int64) bool {
	return r.hwm > 0 && next >= r.hwm
}

// tellNotBack tells notBack, if set, that the feed will not fetch again
// soon.
func (f *batchFeed) tellNotBack() {
	if f.notBack != nil {
		f.notBack()
	}
}
