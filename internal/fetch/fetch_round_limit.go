package fetch

import "github.com/IBM/sarama"

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
