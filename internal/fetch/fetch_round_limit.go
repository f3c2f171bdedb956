package fetch

import (
	"slices"

	"github.com/IBM/sarama"
)

// busyRoundBytes is what a round answered at once asks for at most, in
// partition fetch sizes: half of Consumer.Fetch.MaxBytes, so that a round
// handed out and the next one fetched stay within the limit, as sarama
// does. See docs/batch-feed.md, "Half rounds" (with the measured figures).
func busyRoundBytes(conf *sarama.Config) int32 {
	return max(conf.Consumer.Fetch.MaxBytes/2, 1)
}

// withinResponseLimit splits a round's wants into those whose partition
// fetch sizes add up to at most maxBytes (always at least the first want)
// and the rest, for the next round: a round within the response's limit
// is never starved by it. Only rounds answered at once are split. See
// docs/batch-feed.md, "Half rounds".
func withinResponseLimit(wants []*fetchWant, maxBytes int32) (round, later []*fetchWant) {
	var sum int64
	for i, w := range wants {
		sum += int64(w.size)
		if i > 0 && sum > int64(maxBytes) {
			return wants[:i], wants[i:]
		}
	}
	return wants, nil
}

// ridersOf splits the wants a round's byte count left out into those that
// ride along the round anyway, feeds' first fetches (marked rides), and the
// rest. A first fetch asks for Consumer.Fetch.Default but usually holds
// far less: counting it whole would send a rebalance's hundreds of gained
// partitions in rounds of a few dozen, one after another. Riders come after
// the counted wants, and a round that carries them asks the broker for at
// most busyRoundBytes in all (see roundMaxBytes): the broker fills the
// counted wants first, riders get what is left, and a rider left without
// records is fetched again (see answer). See docs/batch-feed.md, "Half
// rounds".
func ridersOf(wants []*fetchWant) (riders, rest []*fetchWant) {
	for _, w := range wants {
		if w.first {
			w.rides = true
			riders = append(riders, w)
		} else {
			rest = append(rest, w)
		}
	}
	return riders, rest
}

// roundMaxBytes is the response limit of a round of batch: busyRoundBytes
// when riders are aboard (they add to the round's count what the limit
// then bounds), Consumer.Fetch.MaxBytes otherwise.
func roundMaxBytes(conf *sarama.Config, batch []*fetchWant) int32 {
	if carriesRiders(batch) {
		return busyRoundBytes(conf)
	}
	return conf.Consumer.Fetch.MaxBytes
}

// carriesRiders reports whether a round of batch carries riders.
func carriesRiders(batch []*fetchWant) bool {
	return slices.ContainsFunc(batch, func(w *fetchWant) bool { return w.rides })
}
