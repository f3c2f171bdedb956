package fetch

import "time"

// A partition whose long poll answered it with messages up to its
// high-water mark long-polls again as soon as its batch is handed over.
// Sent without it, the broker's next long poll would hold the own
// connection for Consumer.MaxWaitTime while the partition's next fetch
// queued behind it, though its next message came at once. So the idle
// fetcher waits for such partitions before it sends its next long poll,
// for Consumer.MaxProcessingTime at most (sarama's bound on how long one
// partition's hand-over may hold its broker's next fetch). See
// docs/batch-feed.md, "Connections".

// returning is the partitions of one broker that the idle fetcher's next
// long poll waits for.
type returning struct {
	parts map[topicPartition]bool
	back  chan struct{} // closed once every one of parts queued its want
	until time.Time     // the answers' time plus Consumer.MaxProcessingTime
}

// expectReturns notes, before the answers go out, the wants of a long
// poll to broker id answered with messages up to their marks: their next
// fetch is a long poll again (see batchFeed.run). f.mu is not held.
func (f *roundFetcher) expectReturns(id int32, batch []*fetchWant, results []fetchResult) {
	if !f.longPoll {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	queued := make(map[topicPartition]bool)
	for _, w := range f.pending[id] {
		queued[topicPartition{w.topic, w.partition}] = true
	}
	var parts map[topicPartition]bool
	for i, r := range results {
		w := batch[i]
		tp := topicPartition{w.topic, w.partition}
		// A want whose caller stopped waiting (a feed ended, a want moved
		// on) is not coming back; one already queued again is back. Both
		// checked under f.mu: notBackSoon and enqueue take it too.
		if w.ctx != nil && w.ctx.Err() != nil || queued[tp] {
			continue
		}
		if r.err == nil && r.messages() > 0 && reachedMark(r, max(w.offset, r.next)) {
			if parts == nil {
				parts = make(map[topicPartition]bool)
			}
			parts[tp] = true
		}
	}
	if parts == nil {
		return
	}
	if f.returning == nil {
		f.returning = make(map[int32]*returning)
	}
	f.returning[id] = &returning{parts: parts, back: make(chan struct{}),
		until: time.Now().Add(f.env.config.Consumer.MaxProcessingTime)}
}

// returned notes that w, just queued, is back: to the broker that fed it,
// or to another when its leader moved. f.mu is held.
func (f *roundFetcher) returned(w *fetchWant) {
	for id := range f.returning {
		f.stopWaiting(id, topicPartition{w.topic, w.partition})
	}
}

// notBackSoon stops every wait for topic/partition: its feed's reader is
// busy with its last batch, or the feed ended, so its next want may be
// long in coming. The long poll goes without it, and it waits for the
// one after, as it would behind a slow reader anyway.
func (f *roundFetcher) notBackSoon(topic string, partition int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.returning {
		f.stopWaiting(id, topicPartition{topic, partition})
	}
}

// stopWaiting drops tp from what broker id's next long poll waits for.
// f.mu is held.
func (f *roundFetcher) stopWaiting(id int32, tp topicPartition) {
	r := f.returning[id]
	if r == nil || !r.parts[tp] {
		return
	}
	delete(r.parts, tp)
	if len(r.parts) == 0 {
		close(r.back)
		delete(f.returning, id)
	}
}

// holdForReturns waits, in the idle fetcher, until the partitions its
// last long poll to broker id answered with messages up to their marks
// are queued again, for Consumer.MaxProcessingTime at most: a partition
// whose reader is slower, or whose feed stopped, is left to the long poll
// after.
func (f *roundFetcher) holdForReturns(id int32) {
	if !f.longPoll {
		return
	}
	f.mu.Lock()
	r := f.returning[id]
	starved := len(f.starved[id]) > 0
	f.mu.Unlock()
	if r == nil || starved { // records wait below a mark: not held
		return
	}
	t := time.NewTimer(time.Until(r.until))
	defer t.Stop()
	select {
	case <-r.back:
	case <-t.C:
	case <-f.closing:
	}
	f.mu.Lock()
	if f.returning[id] == r {
		delete(f.returning, id)
	}
	f.mu.Unlock()
}
