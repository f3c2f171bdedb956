package fetch

import (
	"context"
	"fmt"
	"math"

	"github.com/IBM/sarama"
)

// feedSource is a Source read through a batch feed: it hands out the
// batch in hand one message at a time, then takes the next one the feed
// fetched meanwhile. See docs/batch-feed.md.
type feedSource struct {
	p     *Partition
	feed  *batchFeed
	retry *feedRetry                // the feed's; read once the feed ended
	batch []*sarama.ConsumerMessage // what is left of the messages made of the batch in hand
	rest  pendingMessages           // the batch in hand's messages not made yet (nil: none)
	made  []*sarama.ConsumerMessage // batch's backing array, made again for each slab
	// opened ends the expectation (ExpectOpen) that holds long polls from
	// Open until the feed's first fetch is answered: the feed counts that
	// fetch as out only once its goroutine has looked its leader up.
	opened func()
	next   int64 // after the last message handed out
	// reported says the feed's end was reported (fellBack): by Next, or
	// by Close when the Source is closed before Next read it.
	reported bool
}

// feedSource starts a batch feed of the partition at from.
func (p *Partition) feedSource(from int64) *feedSource {
	e := p.e
	conf := e.env.config
	opened := func() {}
	if !p.reopened { // the partition's first: a rebalance's first fetches come first
		opened = e.busy.own.expectOpen(expectedOpenFor)
	}
	fetch := feedFetch(e.busy, e.idle, p.topic, p.partition, opened)
	retry := newFeedRetry(e.env.client, conf.Config, p.topic)
	retry.retried = func() { e.deps.FeedRetries.Inc(1) }
	retry.positions = p.positions
	retry.moved = func() <-chan struct{} { return e.moves.nextMove(p.topic) }
	notBack := func() { e.idle.notBackSoon(p.topic, p.partition) }
	feed := startBatchFeed(p.ctx, fetch, retry, p.mark, conf.Consumer.Fetch.Default, conf.Consumer.Fetch.Max, e.budget, from, notBack)
	return &feedSource{p: p, feed: feed, retry: retry, next: from, opened: opened}
}

// Next implements Source. A feed error ends the source: the partition then
// reads through sarama's partition consumer until its fetch restarts. A
// position lost mid-stream (see LostPosition) ends it with that error,
// wrapping ErrSourceEnded, and no fallback: the reader decides where to go
// on.
func (s *feedSource) Next(wake <-chan struct{}) (*sarama.ConsumerMessage, error) {
	for len(s.batch) == 0 {
		if s.rest != nil {
			// The batch's next messages, a slab at a time as they go out:
			// made just before the hand-over, they are still in the cache.
			s.made, _ = s.rest.take(s.made[:0], slabMessages)
			s.batch = s.made
			if s.rest.left() == 0 || len(s.batch) == 0 {
				s.rest = nil
			}
			if len(s.batch) == 0 {
				s.feed.handedOut()
			}
			continue
		}
		select {
		case <-wake:
			return nil, nil
		case b := <-s.feed.batches:
			if _, lost := LostPosition(b.err); lost {
				return nil, fmt.Errorf("%w: %w", ErrSourceEnded, b.err)
			}
			if b.err != nil {
				s.fellBack(b.err)
				return nil, ErrSourceEnded
			}
			s.batch, s.rest = b.msgs, b.unparsed
			s.feed.taken(b)
			s.p.e.batchSize.Update(int64(b.messages()))
		}
	}
	m := s.batch[0]
	if s.batch = s.batch[1:]; len(s.batch) == 0 && s.rest == nil {
		s.batch = nil // let the batch (and its response buffer) go
		s.made = s.made[:0]
		clear(s.made[:cap(s.made)])
		s.feed.handedOut()
	}
	highWaterMark{s.p.mark}.past(m.Offset)
	s.next = m.Offset + 1
	return m, nil
}

// fellBack reports the feed's end with err: the partition reads through
// sarama's partition consumer from s.next on (a *FallbackError, around a
// *RetriesExhaustedError when every retry failed), so a slower path is
// never taken silently.
func (s *feedSource) fellBack(err error) {
	s.reported = true
	p := s.p
	p.e.deps.FeedFallbacks.Inc(1)
	p.e.env.log.Warn("batch fetch ended: reading through sarama's partition consumer until the next restart of the partition's fetch",
		"topic", p.topic, "partition", p.partition, "offset", s.next, "err", err)
	// The feed's goroutine has ended its retries before it sent err.
	if r := s.retry; r != nil && retriableFeedError(err) && r.failed >= r.limit {
		err = &RetriesExhaustedError{Topic: p.topic, Partition: p.partition, Offset: s.next, Retries: r.failed, Err: err}
	}
	p.e.deps.Report(&sarama.ConsumerError{Topic: p.topic, Partition: p.partition,
		Err: &FallbackError{Topic: p.topic, Partition: p.partition, Offset: s.next, Err: err}})
}

// Close implements Source: it stops the feed. Its error is the one that
// ended the feed, if any: a lost position (see LostPosition) is not a
// failure, and the next Open reads through the feed again. Any other,
// which the next Open reads through sarama's partition consumer for, is
// reported here if Next did not read it (the Source closed for a seek or
// a pause just after the feed ended). Not when the partition itself
// ended (its context: a stop, a loss), which no Open follows.
func (s *feedSource) Close() error {
	err := s.feed.stop()
	if s.opened != nil {
		s.opened() // a feed stopped before its first fetch was answered
	}
	if fallsBack(err) && !s.reported && s.p.ctx.Err() == nil {
		s.fellBack(err)
	}
	return s.p.closed(err)
}

// feedFetch is a feed's fetch of one partition: a busy fetch through busy
// (answered at once), an idle one through idle (long-polled), keeping every
// message of the answer. Its first call is the feed's first fetch (see
// fetchWant.first), after which it calls answered; one feed calls it, from
// one goroutine.
func feedFetch(busy, idle *roundFetcher, topic string, partition int32, answered func()) func(context.Context, bool, int64, int32) fetchResult {
	first := true
	return func(ctx context.Context, isBusy bool, offset int64, size int32) fetchResult {
		f := busy
		if !isBusy {
			f = idle
		}
		r := f.fetchUnparsed(ctx, topic, partition, offset, math.MaxInt, size, first && isBusy)
		if first {
			answered()
		}
		first = false
		return r
	}
}
