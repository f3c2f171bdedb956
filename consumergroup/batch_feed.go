package consumergroup

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/IBM/sarama"
)

// batchFeed fetches a partition's batches in the background, from one
// offset on, and passes each on whole: while the worker hands one batch
// out, the next one is fetched (the channel is unbuffered, so at most one
// batch waits beside the one being handed out).
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
	// sizes: Consumer.Fetch.Default, and Consumer.Fetch.Max (0: no cap).
	fetchDefault, fetchMax int32

	budget  *feedBudget // the group's, shared by every feed
	hold    feedHold    // what this feed holds of budget
	current int64       // bytes of the batch pump hands out; pump's
}

// startBatchFeed starts fetching at from.
func (w *partitionWorker) startBatchFeed(from int64) *batchFeed {
	conf := w.cg.config.Config
	fetch := func(ctx context.Context, busy bool, offset int64, size int32) fetchResult {
		fetcher := w.cg.fetcher
		if !busy {
			fetcher = w.cg.batchFetcher
		}
		return fetcher.fetchSized(ctx, w.tp.Topic, w.tp.Partition, offset, math.MaxInt, size)
	}
	retry := newFeedRetry(w.cg.client, conf, w.tp.Topic)
	retry.retried = func() { w.cg.met().feedRetries.Inc(1) }
	return newBatchFeed(w.ctx, fetch, retry, conf.Consumer.Fetch.Default, conf.Consumer.Fetch.Max, w.cg.feedBudget, from)
}

// newBatchFeed starts a feed fetching with fetch from offset from on, until
// ctx ends or the feed is stopped. A fetch that fails is tried again as
// retry says (nil: never); otherwise the error ends the feed.
func newBatchFeed(ctx context.Context, fetch func(context.Context, bool, int64, int32) fetchResult,
	retry *feedRetry, fetchDefault, fetchMax int32, budget *feedBudget, from int64) *batchFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &batchFeed{
		batches: make(chan fetchResult), cancel: cancel, done: make(chan struct{}),
		fetch: fetch, retry: retry, fetchDefault: fetchDefault, fetchMax: fetchMax, budget: budget,
	}
	go f.run(ctx, from)
	return f
}

// A fetch after one that returned messages goes out with the group's
// first fetches, answered at once; a fetch after an empty one long-polls,
// over connections of its own (see firstFetcher.ownConns), so the idle
// partitions' long polls never hold up a busy partition's next batch.
// While pump still hands out a batch, the next fetch waits for room in the
// group's byte budget (see feedBudget). A record batch larger than the
// fetch size is fetched again with the size doubled (see grownFetchSize);
// the size goes back to Consumer.Fetch.Default once a fetch returns
// messages. A fetch that fails with an error retrying mends (a moved
// leader, a broken connection: see feedRetry) is tried again at the same
// offset, the one after the last batch passed on, after the retry backoff
// and a metadata refresh; any other error, or too many retries in a row,
// ends the feed.
func (f *batchFeed) run(ctx context.Context, next int64) {
	defer close(f.done)
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
		r.bytes = heldBytes(r.msgs)
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
		f.retry.succeeded()
		next = max(next, r.next)
		busy = len(r.msgs) > 0
		if !busy {
			continue // the long poll ended without messages
		}
		size = f.fetchDefault
		select {
		case f.batches <- r:
		case <-ctx.Done():
			return
		}
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

// taken notes that pump took b to hand out. pump calls it.
func (f *batchFeed) taken(b fetchResult) { f.current = b.bytes }

// handedOut gives the bytes of the batch pump took last back to the
// budget: its last message is handed out. pump calls it.
func (f *batchFeed) handedOut() {
	f.budget.release(&f.hold, f.current)
	f.current = 0
}

// connTo returns the connection to leader the fetcher's rounds use: the
// client's, or, with ownConns, one of the fetcher's own, opened on first
// use. f.mu is held.
func (f *firstFetcher) connTo(leader *sarama.Broker) *sarama.Broker {
	if !f.ownConns {
		return leader
	}
	if f.closed {
		return nil // opened now, nobody would close it
	}
	if f.conns == nil {
		f.conns = make(map[int32]*sarama.Broker)
	}
	b, ok := f.conns[leader.ID()]
	if !ok || b.Addr() != leader.Addr() {
		if ok { // the leader moved: Close waits for a long poll in flight
			old := b
			go func() { _ = old.Close() }()
		}
		b = sarama.NewBroker(leader.Addr())
		_ = b.Open(ownConnConfig(f.cg.config.Config)) // a failed dial fails the round's Fetch
		f.conns[leader.ID()] = b
	}
	return b
}

// dropConn forgets conn, the fetcher's own connection to broker id, after
// a round over it failed, and closes it in the background: a sarama Broker
// whose connection broke fails every later request, so keeping it would
// fail every later round to that broker. The next round opens a new one.
// A connection that is not (or no longer) the fetcher's own is left alone:
// the client's, or one already replaced.
func (f *firstFetcher) dropConn(id int32, conn *sarama.Broker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns[id] != conn {
		return
	}
	delete(f.conns, id)
	go func() { _ = conn.Close() }()
}

// ownConnReadMargin is how much longer than Consumer.MaxWaitTime a long
// poll on an own connection may take to be answered before the round fails
// (its feeds then fall back to sarama's partition consumer).
const ownConnReadMargin = 5 * time.Second

// ownConnConfig is conf with the read timeout of the fetcher's own
// connections: at most Consumer.MaxWaitTime + ownConnReadMargin. A broker
// that stops answering holds a long poll, and, after closeConns, the
// connection, for the read timeout: 30 s by default, bounded so.
func ownConnConfig(conf *sarama.Config) *sarama.Config {
	c := *conf
	c.Net.ReadTimeout = min(conf.Net.ReadTimeout, conf.Consumer.MaxWaitTime+ownConnReadMargin)
	return &c
}

// closeConns closes the fetcher's own connections in the background:
// sarama's Broker.Close waits for the answer to a long poll in flight,
// which nobody reads any more: up to Consumer.MaxWaitTime from a broker
// that answers, up to the own connections' read timeout (see
// ownConnConfig) from one that hangs. Rounds after it fail instead of
// opening new connections.
func (f *firstFetcher) closeConns() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for id, b := range f.conns {
		go func() { _ = b.Close() }()
		delete(f.conns, id)
	}
}

// takeBatch returns b's messages for pump's prefix path and raises the
// worker's high-water mark to the one in b's fetch response, so lag (the
// mark minus the committed offset) counts what the leader holds beyond the
// batch, not only the batch: the prefix path alone would set the mark to
// the offset after the last message handed out. The response is newer than
// any mark seen before it, so it replaces the mark (a log truncated by an
// unclean leader election lowers it); a response without one (0, a broker
// that sent none) leaves the mark alone.
func (w *partitionWorker) takeBatch(b fetchResult) []*sarama.ConsumerMessage {
	if b.hwm > 0 {
		w.hwm.Store(b.hwm)
	}
	return b.msgs
}
