package fetch

import (
	"time"

	"github.com/IBM/sarama"
)

// Records decoded from an uncompressed batch alias the buffer of the whole
// fetch response, which holds the records of every partition of the round.
// A partition whose batch waits for a slow reader would then keep all of
// it alive, while the feed budget counts only that partition's keys and
// values. Copying every shared response out measured worse (half as many
// bytes allocated again, a higher peak RSS) than the pinning it prevents,
// since most batches are taken at once. So a batch fetched ahead is copied
// out, into one buffer of its own, only when its reader has not taken it
// within detachAfter: then it pins what it is counted for. See
// docs/batch-feed.md, "What a partition pins".

// detachAfter is how long a batch fetched ahead waits for its reader
// before it is copied out of a shared response.
const detachAfter = 100 * time.Millisecond

// markShared flags the results of a response that fed more than one
// partition: their messages alias a buffer that their round-mates' do too.
func markShared(results []fetchResult) {
	fed := 0
	for _, r := range results {
		if r.messages() > 0 {
			fed++
		}
	}
	if fed < 2 {
		return
	}
	for i := range results {
		results[i].shared = results[i].messages() > 0
	}
}

// detach copies r's messages out of the response they alias, when it is
// shared; r then pins only its own bytes.
func (r *fetchResult) detach() {
	if r.shared {
		r.parse() // a batch left waiting is made now: its copy is what it pins
		detachMessages(r.msgs)
		r.shared = false
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
