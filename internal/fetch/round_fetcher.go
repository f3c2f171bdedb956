package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// roundFetcher fetches partitions' record batches directly from their
// leaders: with Config.Batches, every batch the batch feed hands out (see
// newFetchers); without, the first batch of a newly claimed partition.
// A gained partition's first fetch goes out at once, and requests to one
// broker are coalesced into rounds. See docs/batch-feed.md.
type roundFetcher struct {
	env *env
	// longPoll makes every round wait on the broker for Consumer.Fetch.Min
	// bytes, up to Consumer.MaxWaitTime (the batch feed's follow-up
	// fetches); otherwise the broker answers at once.
	longPoll bool
	// own sends the rounds over the group's own connections, one per
	// broker (see fetcher_conns.go); nil: over the client's.
	own    *ownConns
	closed bool           // closeConns was called: no new rounds
	rounds sync.WaitGroup // the round loops and hand-overs running (see run, handOver)
	// closing is closed by closeConns: a round over the client's
	// connection is abandoned then (see sendOver).
	closing chan struct{}

	mu       sync.Mutex
	pending  map[int32][]*fetchWant // by broker id
	starved  map[int32][]*fetchWant // by broker id: fetched again before pending (see answer)
	inFlight map[int32]bool
	// handing holds, by broker id, the hand-over of its last busy round
	// while it runs: closed when it is over (see handOver).
	handing map[int32]chan struct{}
	// returning holds, by broker id, the partitions the idle fetcher's
	// next long poll waits for (see long_poll_returns.go).
	returning map[int32]*returning
	// leaders holds, by broker id, the broker the client named leader for
	// the latest want queued to that id: a round goes to it, not to the
	// one the round loop started with (the client replaces a broker whose
	// address changed, and closes the old one).
	leaders map[int32]*sarama.Broker

	// wants are the wants fetchSized waits for, which a leader move sends
	// to the new leader (see movable_wants.go).
	wants movableWants
}

type fetchWant struct {
	ctx       context.Context // the caller's: once it ends, nobody waits for the answer
	topic     string
	partition int32
	offset    int64
	epoch     int32            // the leader's epoch in the client's metadata (-1: unknown)
	size      int32            // the partition's fetch size in bytes
	limit     int              // messages kept at most (at least one)
	done      chan fetchResult // buffered: the fetcher never blocks on it
	starved   int              // rounds whose byte limit left it without records (see answer)
	// first says this is the first fetch of a batch feed: how much the
	// partition holds is not known yet, and it may ride along a round
	// beyond the round's byte count (see ridersOf).
	first bool
	// rides says the want rides along its round (see ridersOf); set by
	// the round's loop, cleared when the round is handed over (see
	// answer).
	rides bool
	// shuffledOut counts the rounds that left it without records while
	// riders went in no set order beside it (see answer).
	shuffledOut int
	// ownOnly says its round goes over the own connection, even behind a
	// long poll: sarama read its answer over the client's as a batch cut
	// off, which may be a whole dense one (see answer).
	ownOnly bool
}

type fetchResult struct {
	msgs []*sarama.ConsumerMessage
	next int64 // the offset after the last record batch read (kept or not)
	// hwm is the partition's high-water mark in the response: the offset
	// after the last message the leader holds, read or not.
	hwm   int64
	bytes int64 // what msgs hold against the feed budget (see heldBytes): counted by parse, or by the feed
	// shared says msgs alias a response that fed other partitions too
	// (see detach.go).
	shared bool
	// throttle is how long the broker asked to hold back the next fetch (a
	// client quota exceeded): the answer holds no messages then.
	throttle time.Duration
	err      error
	// unparsed holds the answer's messages before they are made: the
	// round's loop only scans an answer, and the caller makes its
	// messages (see parse).
	unparsed pendingMessages
}

// errLegacyMessageSet says a fetch response held a legacy message set,
// which only sarama's partition consumer decodes.
var errLegacyMessageSet = errors.New("legacy message set in the fetch response")

// errFetcherClosed answers the rounds of a fetcher whose own connections
// were closed (the group is closing).
var errFetcherClosed = errors.New("fetcher closed")

// errPartialBatch says the first record batch at the offset is larger than
// the fetch size: the batch feed fetches it again with a larger size
// (sarama's partition consumer grows its size the same way); the first
// fetch leaves it to sarama.
var errPartialBatch = errors.New("record batch larger than the fetch size")

// errNoRecordsBelowMark says a fetch answered no record, and no batch to
// step past (see emptyBatchesEnd), at an offset below the partition's
// high-water mark. A partition the response's byte limit starved reads
// this way and is fetched again (see answer); otherwise the partition is
// left to sarama's partition consumer.
var errNoRecordsBelowMark = errors.New("no records below the high-water mark")

func newRoundFetcher(e *env) *roundFetcher {
	return &roundFetcher{env: e, pending: make(map[int32][]*fetchWant), starved: make(map[int32][]*fetchWant), inFlight: make(map[int32]bool),
		handing: make(map[int32]chan struct{}), leaders: make(map[int32]*sarama.Broker), closing: make(chan struct{})}
}

// newFetchers returns the group's two fetchers: busy reads first batches
// and, with Config.Batches, the batch feed's fetches answered at once; idle
// the feed's long polls. They share one connection of their own per
// broker, apart from the client's, where a partition read by sarama's
// partition consumer long-polls; a busy round goes over the client's only
// while a long poll is in flight on the own one. See docs/batch-feed.md,
// "Connections".
func newFetchers(e *env) (busy, idle *roundFetcher) {
	own := newOwnConns(e)
	busy = newRoundFetcher(e)
	busy.own = own
	idle = newRoundFetcher(e)
	idle.longPoll, idle.own = true, own
	return busy, idle
}

// fetch returns the messages at and after offset in the first batch the
// leader returns, at most ChannelBufferSize of them. It returns nothing,
// and no error, when the fast path does not apply: no stored offset, a
// Kafka version older than 0.11 (no record batches), read-committed
// isolation (aborted transactions need filtering), or a legacy message set
// in the response. Errors are the broker's (for
// example sarama.ErrOffsetOutOfRange); the caller falls back to the
// partition consumer alone.
func (f *roundFetcher) fetch(ctx context.Context, topic string, partition int32, offset int64) ([]*sarama.ConsumerMessage, error) {
	conf := f.env.config.Config
	if offset < 0 || !directFetchApplies(conf) {
		return nil, nil
	}
	r := f.fetchUpTo(ctx, topic, partition, offset, max(conf.ChannelBufferSize, 1))
	return r.msgs, r.err
}

// directFetchApplies reports whether conf allows direct fetches: record
// batches (Kafka 0.11 or later) read uncommitted, from the leader, without
// a RackID (sarama follows the preferred read replica; direct fetches
// would not). See docs/batch-feed.md, "Where batches come from".
func directFetchApplies(conf *sarama.Config) bool {
	return conf.Version.IsAtLeast(sarama.V0_11_0_0) && conf.Consumer.IsolationLevel == sarama.ReadUncommitted &&
		conf.RackID == ""
}

// fetchUpTo fetches at offset through the broker's coalesced rounds and
// keeps at most limit messages; the partition's fetch size is
// Consumer.Fetch.Default.
func (f *roundFetcher) fetchUpTo(ctx context.Context, topic string, partition int32, offset int64, limit int) fetchResult {
	return f.fetchSized(ctx, topic, partition, offset, limit, f.env.config.Consumer.Fetch.Default)
}

// fetchSized is fetchUpTo with a fetch size of size bytes for the
// partition. It follows a leader that moved while it waited: when the
// client names another leader (or epoch) than the one fetched, because a
// move was reported (see Engine.LeadersMoved) or the answer was a leader
// error, it fetches again from the new one, up to maxMovesPerFetch times.
func (f *roundFetcher) fetchSized(ctx context.Context, topic string, partition int32, offset int64, limit int, size int32) fetchResult {
	r := f.fetchUnparsed(ctx, topic, partition, offset, limit, size, false)
	r.parse()
	return r
}

// fetchUnparsed is fetchSized leaving the messages to be made (see
// fetchResult.parse): a batch feed's Source makes them as it hands them
// out. first says it is the feed's first fetch (see fetchWant.first).
func (f *roundFetcher) fetchUnparsed(ctx context.Context, topic string, partition int32, offset int64, limit int, size int32, first bool) fetchResult {
	f.env.log.Debug("first fetch", "topic", topic, "partition", partition, "offset", offset)
	for moves := 0; ; moves++ {
		leader, epoch, err := leaderAndEpoch(f.env.client, topic, partition)
		if err != nil {
			return fetchResult{err: err}
		}
		w := &fetchWant{topic: topic, partition: partition, offset: offset, epoch: epoch, size: size, limit: limit,
			first: first, done: make(chan fetchResult, 1)}
		r, moved := f.fetchFrom(ctx, leader, w)
		if !moved || moves == maxMovesPerFetch {
			return r
		}
		f.env.log.Debug("leader moved; fetching again from the new one", "topic", topic, "partition", partition,
			"from", leader.ID(), "err", r.err)
	}
}

// fetchFrom queues w for a round to leader and waits for its answer. It
// reports moved when the want was cancelled because its partition's leader
// moved (see followMoves, stillLed), or was answered with a leader error
// while the client names another leader or epoch by now: the caller then
// fetches again from the new leader.
func (f *roundFetcher) fetchFrom(ctx context.Context, leader *sarama.Broker, w *fetchWant) (r fetchResult, moved bool) {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if w.first && !f.longPoll && f.own != nil {
		f.own.firstFetchStarted(leader.ID())
		defer f.own.firstFetchEnded(leader.ID())
	}
	w.ctx = wctx
	f.wants.add(w, leader.ID(), cancel)
	defer f.wants.remove(w)
	f.enqueue(leader, w)
	select {
	case r := <-w.done:
		return r, leaderMovedError(r.err) && f.ledElsewhere(w, leader.ID())
	case <-wctx.Done():
		if ctx.Err() != nil {
			return fetchResult{err: ctx.Err()}, false
		}
		// the old leader's round may still answer; nobody reads it (done
		// is buffered)
		return fetchResult{next: w.offset}, true
	}
}

// applyInterceptors runs sarama's Consumer.Interceptors on msgs (see
// Engine.HandingOut). A panicking interceptor is skipped for that message,
// as sarama does.
func applyInterceptors(interceptors []sarama.ConsumerInterceptor, msgs []*sarama.ConsumerMessage) {
	for _, m := range msgs {
		for _, ic := range interceptors {
			func() {
				defer func() { _ = recover() }()
				ic.OnConsume(m)
			}()
		}
	}
}

// enqueue queues w for the next round to leader, the partition's leader
// as the client knows it now, and starts that broker's round loop unless
// it runs.
func (f *roundFetcher) enqueue(leader *sarama.Broker, w *fetchWant) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		w.done <- fetchResult{err: errFetcherClosed} // closeConns waits for no new round
		return
	}
	id := leader.ID()
	f.pending[id] = append(f.pending[id], w)
	f.returned(w)
	f.leaders[id] = leader
	f.runLocked(id)
}

// runLocked starts broker id's round loop unless it runs. f.mu is held.
func (f *roundFetcher) runLocked(id int32) {
	if !f.inFlight[id] {
		f.inFlight[id] = true
		f.rounds.Add(1)
		go func() {
			defer f.rounds.Done()
			f.run(id)
		}()
	}
}

// run sends the queued wants of broker id, one request per round, until
// none are left (see nextRound), each to the broker last named leader under
// id. A round that finds an own connection closed is sent once more over a
// new one; a round whose response does not decode has each of its
// wants fetched alone (see isolate); a round that fails otherwise, or
// again, drops its connection, and its wants get the error. See
// docs/batch-feed.md, "Broken connections" and "Errors stay per
// partition". A busy round's answers are handed over while the next round
// is sent (see handOver).
func (f *roundFetcher) run(id int32) {
	for {
		f.holdNextRound(id)
		f.mu.Lock()
		batch := f.nextRound(id)
		if len(batch) == 0 {
			f.inFlight[id] = false
			f.mu.Unlock()
			return
		}
		mustOwn := slices.ContainsFunc(batch, func(w *fetchWant) bool { return w.ownOnly })
		conn, own := f.connTo(f.leaders[id], mustOwn)
		f.mu.Unlock()
		if batch = f.stillLed(id, batch); len(batch) == 0 {
			f.releaseConn(id, conn, own) // nothing sent: the round is over
			continue
		}
		resp, err := f.sendOver(conn, own, batch)
		if own && connectionClosed(err) {
			f.releaseConn(id, conn, own)
			f.dropConn(id, conn, own)
			f.mu.Lock()
			conn, own = f.connTo(f.leaders[id], mustOwn)
			f.mu.Unlock()
			resp, err = f.sendOver(conn, own, batch)
		}
		f.releaseConn(id, conn, own)
		f.handedOver(id) // one round's answers at a time, in the rounds' order
		if len(batch) > 1 && undecodable(err) {
			f.isolate(id, batch) // the connection is fine: the whole answer was read
			continue
		}
		if err != nil {
			f.dropConn(id, conn, own)
		}
		if f.longPoll {
			// Its answers say which partitions the next long poll waits
			// for (see expectReturns): handed over before it is held.
			f.deliver(id, batch, resp, err)
			continue
		}
		f.handOver(id, func() { f.deliver(id, batch, resp, err) })
	}
}

// holdNextRound holds the idle fetcher's next round to broker id: for
// the partitions its last long poll fed (see holdForReturns), then, with
// them back, for the first fetches out to it (see holdLongPoll).
func (f *roundFetcher) holdNextRound(id int32) {
	f.holdForReturns(id)
	f.holdLongPoll(id)
}

// takeDistinct splits wants into a batch with at most one want per
// partition (a fetch request holds each partition once) and the rest.
// Wants whose caller stopped waiting (a stopped feed, a worker gone) are
// dropped: fetching them would only delay a live want of the same
// partition by a round.
func takeDistinct(wants []*fetchWant) (batch, rest []*fetchWant) {
	seen := make(map[topicPartition]bool, len(wants))
	for _, w := range wants {
		if w.ctx != nil && w.ctx.Err() != nil {
			continue
		}
		tp := topicPartition{w.topic, w.partition}
		if seen[tp] {
			rest = append(rest, w)
			continue
		}
		seen[tp] = true
		batch = append(batch, w)
	}
	return batch, rest
}

// roundResponse is a round's Fetch response: decoded by this package when
// it came over an own connection, by sarama otherwise.
type roundResponse struct {
	decoded *fetchAnswer
	sarama  *sarama.FetchResponse
}

// send sends one fetch request for batch over broker (nil: the fetcher is
// closed) and returns the response, or the error of the request itself (a
// broken connection, a broker gone), not the partitions' own errors. Over
// an own connection, the request is written and its response decoded here
// (see own_conn_fetch.go); over the client's, by sarama.
func (f *roundFetcher) send(broker *sarama.Broker, own bool, batch []*fetchWant) (roundResponse, error) {
	if broker == nil {
		return roundResponse{}, errFetcherClosed
	}
	conf := f.env.config.Config
	req := newFetchRequest(conf)
	req.MaxBytes = roundMaxBytes(conf, batch)
	if f.longPoll {
		req.MinBytes = conf.Consumer.Fetch.Min
		req.MaxWaitTime = int32(conf.Consumer.MaxWaitTime / time.Millisecond)
	}
	f.env.log.Debug("fetch round", "broker", broker.Addr(), "partitions", len(batch))
	defer f.env.log.Debug("fetch round answered", "broker", broker.Addr(), "partitions", len(batch))
	if own {
		if c := f.own.fetchConn(broker); c != nil {
			a, err := c.fetch(fetchRequestFields{maxWait: req.MaxWaitTime, minBytes: req.MinBytes, maxBytes: req.MaxBytes,
				sessionID: req.SessionID, sessionEpoch: req.SessionEpoch}, batch)
			return roundResponse{decoded: a}, err
		}
		// dropped meanwhile: sarama's Broker, closed, answers the error
	}
	for _, w := range batch {
		req.AddBlock(w.topic, w.partition, w.offset, w.size, w.epoch)
	}
	resp, err := broker.Fetch(req)
	if err == nil {
		err = topLevelError(sarama.KError(resp.ErrorCode))
	}
	return roundResponse{sarama: resp}, err
}

// sendOver is send over conn, an own connection or not. A round over the
// client's connection, which closeConns cannot shut, is abandoned when
// closeConns is called (errFetcherClosed): a hung broker would hold its
// answer, and the group's Close, for the read timeout. Its request ends
// when sarama's does.
func (f *roundFetcher) sendOver(conn *sarama.Broker, own bool, batch []*fetchWant) (roundResponse, error) {
	if own || conn == nil {
		return f.send(conn, own, batch)
	}
	type answer struct {
		resp roundResponse
		err  error
	}
	done := make(chan answer, 1) // never blocks the request's goroutine
	go func() {
		resp, err := f.send(conn, false, batch)
		done <- answer{resp, err}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-f.closing:
		return roundResponse{}, errFetcherClosed
	}
}

// deliver answers every want of batch, a round to broker id, with its
// share of resp, or with err, but for those the response's byte limit
// starved (see answer). It returns the wants answered nothing, no error
// either.
func (f *roundFetcher) deliver(id int32, batch []*fetchWant, resp roundResponse, err error) (empty []*fetchWant) {
	if err != nil {
		for _, w := range batch {
			w.done <- fetchResult{err: err}
		}
		return nil
	}
	if throttle, none := resp.throttled(); throttle > 0 && none {
		// Over a client quota the broker answers at once, with no
		// partition, only how long to hold back: nothing yet, as sarama's
		// partition consumer reads it.
		for _, w := range batch {
			w.done <- fetchResult{next: w.offset, throttle: throttle}
		}
		return nil
	}
	results := make([]fetchResult, len(batch))
	for i, w := range batch {
		results[i] = resp.scan(w)
		if r := results[i]; r.err == nil && r.messages() == 0 && r.next == w.offset {
			empty = append(empty, w)
		}
	}
	markShared(results)
	// sarama encodes a request's partitions in no set order: over the
	// client's connection a rider may have gone before a counted want.
	f.answer(id, batch, results, resp.sarama != nil)
	return empty
}

// throttled returns how long the broker asked to hold back, and whether
// the response holds no partition.
func (r roundResponse) throttled() (time.Duration, bool) {
	if r.decoded != nil {
		return r.decoded.throttle, len(r.decoded.partitions) == 0
	}
	return r.sarama.ThrottleTime, len(r.sarama.Blocks) == 0
}

// scan scans w's partition's answer (see scanBatches).
func (r roundResponse) scan(w *fetchWant) fetchResult {
	if r.decoded != nil {
		return scanAnswer(r.decoded.partition(w.topic, w.partition), w)
	}
	return scanRecords(r.sarama.GetBlock(w.topic, w.partition), w)
}

// parseFirstBatch returns the messages of block at and after w.offset, at
// most w.limit of them: the partition consumer starts after the last one,
// so nothing is skipped, and nothing past the limit is decoded. The kept
// ones alias the response buffer, as sarama's do.
func parseFirstBatch(block *sarama.FetchResponseBlock, w *fetchWant) ([]*sarama.ConsumerMessage, error) {
	r := parseRecords(block, w)
	if errors.Is(r.err, errLegacyMessageSet) {
		return nil, nil // leave it to sarama
	}
	return r.msgs, r.err
}

// connectionClosed reports whether err says the connection was closed
// under a request (by the peer, or reset), not that the broker is slow: a
// timed-out round sent again would wait the read timeout again.
func connectionClosed(err error) bool {
	if err == nil {
		return false
	}
	for _, closed := range []error{io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe, net.ErrClosed,
		syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, syscall.ENOTCONN} {
		if errors.Is(err, closed) {
			return true
		}
	}
	return false
}
