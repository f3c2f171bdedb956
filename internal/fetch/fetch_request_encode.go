package fetch

import (
	"encoding/binary"
)

// fetchRequestFields are a Fetch request's fields besides its partitions.
type fetchRequestFields struct {
	version                     int16
	maxWait, minBytes, maxBytes int32
	sessionID, sessionEpoch     int32
}

// encodeFetchRequest encodes a Fetch request for batch, one partition per
// want in their order, with its size prefix and header (v1; v2, flexible,
// from Fetch v12), as sarama's FetchRequest encodes it: read uncommitted,
// no rack, no forgotten topics, the wants' leader epochs (v9 on), no last
// fetched epoch (-1, v12 on).
func encodeFetchRequest(req fetchRequestFields, correlation int32, clientID string, batch []*fetchWant) []byte {
	flexible := req.version >= 12
	w := wireWriter{flexible: flexible, buf: make([]byte, 4, 128+32*len(batch))}
	w.int16(1) // Fetch
	w.int16(req.version)
	w.int32(correlation)
	w.int16(int16(len(clientID))) // the header's client id is never compact
	w.buf = append(w.buf, clientID...)
	w.tags()
	w.int32(-1) // replica id: a consumer
	w.int32(req.maxWait)
	w.int32(req.minBytes)
	w.int32(req.maxBytes)
	w.buf = append(w.buf, 0) // read uncommitted
	if req.version >= 7 {
		w.int32(req.sessionID)
		w.int32(req.sessionEpoch)
	}
	topics := requestOrder(batch)
	w.arrayLength(len(topics))
	for _, wants := range topics {
		w.string(wants[0].topic)
		w.arrayLength(len(wants))
		for _, want := range wants {
			w.int32(want.partition)
			if req.version >= 9 {
				w.int32(want.epoch)
			}
			w.int64(want.offset)
			if req.version >= 12 {
				w.int32(-1) // last fetched epoch
			}
			w.int64(-1) // log start offset: a consumer's
			w.int32(want.size)
			w.tags()
		}
		w.tags()
	}
	if req.version >= 7 {
		w.arrayLength(0) // forgotten topics
	}
	if req.version >= 11 {
		w.string("") // rack
	}
	w.tags()
	binary.BigEndian.PutUint32(w.buf, uint32(len(w.buf)-4))
	return w.buf
}

// requestOrder groups a round's wants by topic for the request, every
// counted want's topic before any rider's: the broker fills partitions in
// request order, so a rider must never come before a counted want (see
// ridersOf). A topic with both comes twice; the broker reads the request's
// partitions in order whatever their topics' grouping.
func requestOrder(batch []*fetchWant) [][]*fetchWant {
	var counted, riders []*fetchWant
	for _, w := range batch {
		if w.rides {
			riders = append(riders, w)
		} else {
			counted = append(counted, w)
		}
	}
	return append(groupByTopic(counted), groupByTopic(riders)...)
}

// groupByTopic groups wants by topic, topics in the order they first come.
func groupByTopic(batch []*fetchWant) [][]*fetchWant {
	var topics [][]*fetchWant
	index := make(map[string]int, 4)
	for _, w := range batch {
		i, ok := index[w.topic]
		if !ok {
			i = len(topics)
			index[w.topic] = i
			topics = append(topics, nil)
		}
		topics[i] = append(topics[i], w)
	}
	return topics
}

// wireWriter appends the Kafka protocol's primitive types, compact
// (flexible) or not.
type wireWriter struct {
	buf      []byte
	flexible bool
}

func (w *wireWriter) int16(v int16) { w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(v)) }
func (w *wireWriter) int32(v int32) { w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v)) }
func (w *wireWriter) int64(v int64) { w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v)) }

func (w *wireWriter) arrayLength(n int) {
	if w.flexible {
		w.buf = binary.AppendUvarint(w.buf, uint64(n)+1)
		return
	}
	w.int32(int32(n))
}

func (w *wireWriter) string(s string) {
	if w.flexible {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(s))+1)
	} else {
		w.int16(int16(len(s)))
	}
	w.buf = append(w.buf, s...)
}

// tags writes an empty set of tagged fields (flexible only).
func (w *wireWriter) tags() {
	if w.flexible {
		w.buf = append(w.buf, 0)
	}
}
