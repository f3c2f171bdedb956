package fetch

import "github.com/IBM/sarama"

// Records decoded from an uncompressed batch alias the buffer of the whole
// fetch response, which holds the records of every partition of the round.
// A partition whose messages wait for a slow reader would then keep all of
// it alive, while the feed budget counts only that partition's keys and
// values. So the messages of a response that fed more than one partition
// are copied out, one buffer per partition, and each partition pins what
// it is counted for. See docs/batch-feed.md, "Memory".

// detach copies the messages of results out of the response they came
// from, when more than one partition of it got messages.
func detach(results []fetchResult) {
	fed := 0
	for _, r := range results {
		if len(r.msgs) > 0 {
			fed++
		}
	}
	if fed < 2 {
		return
	}
	for _, r := range results {
		detachMessages(r.msgs)
	}
}

// detachMessages moves the keys, values and headers of msgs into one new
// buffer, exactly as large as heldBytes counts them. Nil stays nil.
func detachMessages(msgs []*sarama.ConsumerMessage) {
	if len(msgs) == 0 {
		return
	}
	slab := make([]byte, 0, heldBytes(msgs))
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(slab)
		slab = append(slab, b...)
		return slab[start:len(slab):len(slab)]
	}
	for _, m := range msgs {
		m.Key, m.Value = take(m.Key), take(m.Value)
		for _, h := range m.Headers {
			h.Key, h.Value = take(h.Key), take(h.Value)
		}
	}
}
