package fetch

import (
	"errors"

	"github.com/IBM/sarama"
)

// Starved partitions: a round's response byte limit can leave a partition
// without records, which reads like a batch compacted empty; only a round
// of its own tells them apart. See docs/batch-feed.md, "Starved
// partitions".

// starvedAlone is how many times a want may come back starved before its
// next round holds it alone.
const starvedAlone = 2

// maxShuffledOut bounds how many rounds with riders in no set order may
// leave a counted want without records before its empty answer counts
// (see answer): a partition that really holds an empty batch is told
// apart in a bounded number of rounds.
const maxShuffledOut = 2

// answer answers batch's wants with results (in the same order), the
// parsed answers of one round to broker id, except those the response's
// byte limit starved: those are queued to be fetched again first (see
// nextRound). unordered says the request listed its partitions in no set
// order (over the client's connection): a rider may then have taken a
// counted want's room, and a counted want left without records is
// fetched again uncounted, up to maxShuffledOut times. f.mu is not held.
func (f *roundFetcher) answer(id int32, batch []*fetchWant, results []fetchResult, unordered bool) {
	fed := false // another partition of the round got records
	for i, r := range results {
		if r.messages() > 0 || r.next > batch[i].offset {
			fed = true
			break
		}
	}
	f.expectReturns(id, batch, results) // before the answers: a feed may want again at once
	shuffled := unordered && carriesRiders(batch)
	var starved, again []*fetchWant
	for i, w := range batch {
		r := results[i]
		if unordered && !w.ownOnly && errors.Is(r.err, errPartialBatch) {
			// sarama's decoder reads a whole compressed batch holding
			// more records than bytes as cut off; this package's reads
			// it whole: fetched again over the own connection.
			w.ownOnly, w.rides = true, false
			again = append(again, w)
			continue
		}
		if shuffled && !w.rides && w.shuffledOut < maxShuffledOut && errors.Is(r.err, errNoRecordsBelowMark) {
			w.shuffledOut++
			again = append(again, w)
			continue
		}
		if w.rides {
			w.rides = false
			if errors.Is(r.err, errNoRecordsBelowMark) {
				// Beyond the round's byte count, the response's limit may
				// have left it nothing: fetched again, never counted as
				// starved (see ridersOf).
				again = append(again, w)
				continue
			}
		}
		if len(batch) > 1 && w.starved < starvedAlone && errors.Is(r.err, errNoRecordsBelowMark) {
			if fed {
				w.starved++
			} else {
				w.starved = starvedAlone // only a round of its own tells
			}
			starved = append(starved, w)
			continue
		}
		w.done <- r
	}
	if len(starved) == 0 && len(again) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed { // closeConns waits for no new round
		for _, w := range append(starved, again...) {
			w.done <- fetchResult{err: errFetcherClosed}
		}
		return
	}
	f.starved[id] = append(f.starved[id], starved...)
	f.pending[id] = append(again, f.pending[id]...)
	f.runLocked(id) // a busy round's loop may have ended meanwhile (see handOver)
}

// nextRound takes the wants of broker id's next round: starved wants first
// (see takeStarved), otherwise the pending ones (see takeDistinct). f.mu is
// held.
func (f *roundFetcher) nextRound(id int32) []*fetchWant {
	batch, rest := takeStarved(f.starved[id], f.env.config.Consumer.Fetch.MaxBytes)
	f.starved[id] = rest
	if len(batch) > 0 {
		return batch
	}
	batch, rest = takeDistinct(f.pending[id])
	if !f.longPoll && f.env.config.Batches {
		var later, riders []*fetchWant
		batch, later = withinResponseLimit(batch, busyRoundBytes(f.env.config.Config))
		riders, later = ridersOf(later)
		batch = append(batch, riders...)
		rest = append(later, rest...)
	}
	f.pending[id] = rest
	return batch
}

// takeStarved splits starved wants into the next round and the rest. A
// want starved starvedAlone times goes alone; otherwise the round takes
// starved wants, each partition once, while their fetch sizes add up to at
// most maxBytes (the response's limit, 0: none), and at least one, so the
// limit does not starve them again. Wants whose caller stopped waiting are
// dropped.
func takeStarved(starved []*fetchWant, maxBytes int32) (batch, rest []*fetchWant) {
	seen := make(map[topicPartition]bool, len(starved))
	var bytes int64
	for _, w := range starved {
		if w.ctx != nil && w.ctx.Err() != nil {
			continue
		}
		tp := topicPartition{w.topic, w.partition}
		alone := w.starved >= starvedAlone
		if len(batch) > 0 && (alone || batch[0].starved >= starvedAlone || seen[tp] ||
			maxBytes > 0 && bytes+int64(w.size) > int64(maxBytes)) {
			rest = append(rest, w)
			continue
		}
		seen[tp] = true
		bytes += int64(w.size)
		batch = append(batch, w)
	}
	return batch, rest
}

// isolate queues every want of batch, a round to broker id whose response
// could not be decoded as a whole, to be fetched alone next: one
// partition's answer (over the client's connection, sarama's decoder
// fails the whole response for null records below Fetch v12 or a corrupt
// batch) then fails only that partition. f.mu is not held.
func (f *roundFetcher) isolate(id int32, batch []*fetchWant) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range batch {
		w.starved = starvedAlone // takeStarved sends it alone
		w.rides = false
	}
	f.starved[id] = append(batch, f.starved[id]...)
}

// undecodable reports whether err, a round's error, says the response was
// read but could not be decoded (by sarama, or decodeFetchResponse): the
// request and the connection are fine, some partition's answer is not.
func undecodable(err error) bool {
	var pde sarama.PacketDecodingError
	return errors.As(err, &pde) || errors.Is(err, sarama.ErrInsufficientData)
}
