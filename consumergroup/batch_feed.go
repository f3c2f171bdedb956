package consumergroup

import (
	"context"
	"math"
	"os"
)

// batchFeedOn switches the experimental batch feed on: a partition worker
// fetches whole batches directly from the partition's leader, one after
// the other, instead of reading sarama's partition consumer one message at
// a time. Set by ZKGROUP_BATCH_FEED=1; off by default.
var batchFeedOn = os.Getenv("ZKGROUP_BATCH_FEED") == "1"

// batchFeed fetches a partition's batches in the background, from one
// offset on, and passes each on whole: while the worker hands one batch
// out, the next one is fetched (the channel is unbuffered, so at most one
// batch waits beside the one being handed out).
type batchFeed struct {
	batches chan fetchResult // a batch with messages, or the error that ended the feed
	cancel  context.CancelFunc
	done    chan struct{} // closed when the feed's goroutine returns
	err     error         // the error that ended the feed, once done is closed
}

// startBatchFeed starts fetching at from.
func (w *partitionWorker) startBatchFeed(from int64) *batchFeed {
	ctx, cancel := context.WithCancel(w.ctx)
	f := &batchFeed{batches: make(chan fetchResult), cancel: cancel, done: make(chan struct{})}
	go f.run(ctx, w, from)
	return f
}

func (f *batchFeed) run(ctx context.Context, w *partitionWorker, next int64) {
	defer close(f.done)
	for {
		r := w.cg.batchFetcher.fetchUpTo(ctx, w.tp.Topic, w.tp.Partition, next, math.MaxInt)
		if ctx.Err() != nil {
			return
		}
		if r.err != nil {
			f.err = r.err
			select {
			case f.batches <- r:
			case <-ctx.Done():
			}
			return
		}
		next = max(next, r.next)
		if len(r.msgs) == 0 {
			continue // the long poll ended without messages
		}
		select {
		case f.batches <- r:
		case <-ctx.Done():
			return
		}
	}
}

// stop ends the feed and waits for its goroutine. It returns the error
// that ended the feed, if any.
func (f *batchFeed) stop() error {
	f.cancel()
	<-f.done
	return f.err
}
