package fetch

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// The batch feed reads the Fetch responses of its own connections itself
// rather than through sarama's decoder, which makes a sarama.Record (and
// its headers) per record in the round's loop, one goroutine per broker.
// The response is read field by field as sarama reads it, at the version
// sent (5 to 12); a partition's records are kept as they came and decoded
// only when its answer is scanned (see decodeRecords), so one partition's
// bad batch fails that partition alone. See docs/batch-feed.md,
// "Decoding".

// fetchAnswer is a decoded Fetch response.
type fetchAnswer struct {
	throttle   time.Duration
	errCode    sarama.KError // the whole request's (v7 on: a fetch session's)
	sessionID  int32
	partitions []partitionAnswer
	// byPartition finds a partition's answer (the last one, as sarama's
	// map keeps it).
	byPartition map[topicPartition]*partitionAnswer
}

// partitionAnswer is one partition's share of a Fetch response.
type partitionAnswer struct {
	topic            string
	partition        int32
	err              sarama.KError
	hwm              int64
	lastStable       int64 // v4 on
	logStart         int64 // v5 on
	aborted          []abortedTransaction
	preferredReplica int32          // v11 on; -1: none
	records          []byte         // the records field as it came; nil: null
	scanned          decodedRecords // records, decoded by the last scan (scanAnswer)
}

// abortedTransaction is an entry of a partition's aborted transactions
// (read committed only; the batch feed reads uncommitted).
type abortedTransaction struct {
	producerID, firstOffset int64
}

// partition returns the answer for topic's partition, or nil.
func (a *fetchAnswer) partition(topic string, partition int32) *partitionAnswer {
	return a.byPartition[topicPartition{topic, partition}]
}

// decodeFetchResponse decodes the body of a Fetch response of version
// version (after the correlation id and, from v12, the header's tagged
// fields). Partition answers alias body. A body that does not read as a
// Fetch response is a sarama.PacketDecodingError, as sarama would say.
func decodeFetchResponse(body []byte, version int16) (*fetchAnswer, error) {
	r := &wireReader{buf: body, flexible: version >= 12}
	a := &fetchAnswer{}
	if version >= 1 {
		a.throttle = time.Duration(r.int32()) * time.Millisecond
	}
	if version >= 7 {
		a.errCode = sarama.KError(r.int16())
		a.sessionID = r.int32()
	}
	topics := r.arrayLength()
	for range topics {
		if r.err != nil {
			break
		}
		name := r.string()
		partitions := r.arrayLength()
		for range partitions {
			if r.err != nil {
				break
			}
			a.partitions = append(a.partitions, r.partitionAnswer(name, version))
		}
		r.skipTags()
	}
	r.skipTags()
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(body) {
		return nil, sarama.PacketDecodingError{Info: fmt.Sprintf("fetch response: %d bytes left over", len(body)-r.off)}
	}
	a.byPartition = make(map[topicPartition]*partitionAnswer, len(a.partitions))
	for i := range a.partitions {
		p := &a.partitions[i]
		a.byPartition[topicPartition{p.topic, p.partition}] = p
	}
	return a, nil
}

// partitionAnswer reads one partition's answer.
func (r *wireReader) partitionAnswer(topic string, version int16) partitionAnswer {
	p := partitionAnswer{topic: topic, partition: r.int32(), preferredReplica: -1}
	p.err = sarama.KError(r.int16())
	p.hwm = r.int64()
	if version >= 4 {
		p.lastStable = r.int64()
		if version >= 5 {
			p.logStart = r.int64()
		}
		n := r.arrayLength()
		for range n {
			if r.err != nil {
				break
			}
			p.aborted = append(p.aborted, abortedTransaction{producerID: r.int64(), firstOffset: r.int64()})
			r.skipTags()
		}
	}
	if version >= 11 {
		p.preferredReplica = r.int32()
	}
	if r.flexible {
		p.records = r.compactBytes()
	} else {
		p.records = r.bytes()
	}
	r.skipTags()
	return p
}

// wireReader reads the Kafka protocol's primitive types, compact
// (flexible) or not; the first error sticks and makes every later read
// return zero.
type wireReader struct {
	buf      []byte
	off      int
	flexible bool
	err      error
}

func (r *wireReader) fail(what string) {
	if r.err == nil {
		r.err = sarama.PacketDecodingError{Info: "fetch response: " + what}
	}
	r.off = len(r.buf)
}

func (r *wireReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf)-r.off {
		r.fail("truncated")
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *wireReader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *wireReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *wireReader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.off += n
	return v
}

// arrayLength reads an array's length; null reads as empty.
func (r *wireReader) arrayLength() int {
	if r.flexible {
		n := r.uvarint()
		if n > uint64(len(r.buf)-r.off)+1 {
			r.fail("array longer than the response")
			return 0
		}
		return max(int(n)-1, 0)
	}
	n := int(r.int32())
	if n < -1 || n > len(r.buf)-r.off {
		r.fail("bad array length")
		return 0
	}
	return max(n, 0)
}

// string reads a (nullable) string; null reads as "".
func (r *wireReader) string() string {
	var n int
	if r.flexible {
		u := r.uvarint()
		if u > uint64(len(r.buf)-r.off)+1 {
			r.fail("string longer than the response")
			return ""
		}
		n = int(u) - 1
	} else {
		n = int(r.int16())
	}
	if n == -1 {
		return ""
	}
	return string(r.take(n))
}

// bytes reads non-compact bytes; -1 is null.
func (r *wireReader) bytes() []byte {
	n := int(r.int32())
	if n == -1 || r.err != nil {
		return nil
	}
	return r.take(n)
}

// compactBytes reads compact bytes; 0 is null.
func (r *wireReader) compactBytes() []byte {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil
	}
	if n-1 > uint64(len(r.buf)-r.off) {
		r.fail("bytes longer than the response")
		return nil
	}
	return r.take(int(n - 1))
}

// skipTags steps over a flexible structure's tagged fields.
func (r *wireReader) skipTags() {
	if !r.flexible {
		return
	}
	n := r.uvarint()
	for range n {
		if r.err != nil {
			return
		}
		r.uvarint() // the tag
		size := r.uvarint()
		if size > uint64(len(r.buf)-r.off) {
			r.fail("tagged field longer than the response")
			return
		}
		r.take(int(size))
	}
}
