package consumergroup

import "github.com/IBM/sarama"

// busyRoundBytes is what a round answered at once asks for at most, in
// partition fetch sizes: half of Consumer.Fetch.MaxBytes. A kept message
// aliases the whole decoded response of its round, other partitions'
// records included, until it is processed, and while one round's messages
// are handed out the next round is fetched: the two together stay within
// Consumer.Fetch.MaxBytes, about what sarama's partition consumers keep
// (one response per broker, the next fetched once every partition took
// its share). With 1,024 busy partitions of 1 MiB each, rounds of the
// whole limit kept about twice the memory sarama's group does; half
// rounds, about as much or less, in the same time.
func busyRoundBytes(conf *sarama.Config) int32 {
	return max(conf.Consumer.Fetch.MaxBytes/2, 1)
}

// withinResponseLimit splits a round's wants into those whose partition
// fetch sizes add up to at most maxBytes (the request's response limit,
// Consumer.Fetch.MaxBytes; always at least the first want) and the rest,
// for the next round. Kafka fills a response partition by partition, in an
// order the request's encoding does not fix, until its limit is reached,
// and answers the partitions after that with no records: a partition
// answered so is fetched again, a round later (see answer). A round asking
// for no more than the limit is never cut short so. Only the rounds answered at once are split: a long poll's round
// waits up to Consumer.MaxWaitTime, so splitting it would delay every
// idle partition after the first share by that much. Without the batch
// feed the fetcher only reads first batches, and a partition answered
// with no records just opens sarama's partition consumer at once, which
// is faster than waiting for later rounds.
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
