package offsets

import (
	"errors"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// held implements heldOffsetsReader.
func (s *KafkaOffsets) held(maxAge time.Duration, owned func() map[string][]int32) (time.Time, map[TopicPartition]int64, error) {
	var read func() (map[TopicPartition]int64, error)
	if owned != nil {
		read = func() (map[TopicPartition]int64, error) { return s.fetchAll(owned()) }
	}
	return s.check.get(maxAge, read)
}

// fetchAll reads what Kafka holds for parts in one OffsetFetch request to
// the coordinator, not retried (the next commit round reads again). A
// partition whose block carries an error is left out; -1: none stored. It
// runs in heldOffsets' goroutine, whose waiters stop waiting at closing.
func (s *KafkaOffsets) fetchAll(parts map[string][]int32) (map[TopicPartition]int64, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	coordinator, err := s.coordinator(time.Time{})
	if err != nil {
		return nil, err
	}
	resp, err := coordinator.FetchOffset(sarama.NewOffsetFetchRequest(s.client.Config().Version, s.group, parts))
	if err != nil {
		s.refreshIfMoved(err)
		return nil, err
	}
	if gerr := resp.GroupError(); !errors.Is(gerr, sarama.ErrNoError) {
		s.refreshIfMoved(gerr)
		return nil, gerr
	}
	out := make(map[TopicPartition]int64)
	for topic, ps := range parts {
		for _, p := range ps {
			if b := resp.GetBlock(topic, p); b != nil && errors.Is(b.Err, sarama.ErrNoError) {
				out[TopicPartition{topic, p}] = max(b.Offset, -1)
			}
		}
	}
	return out, nil
}

// heldOffsetsReader is a GroupOffsets that reads what it holds for many
// partitions in one request (KafkaOffsets): the committer compares
// that with what the owner committed, once a commit round.
type heldOffsetsReader interface {
	// held returns what the store held for the owned partitions when last
	// read, and when that read was sent; it reads again first when that
	// read is maxAge old, unless owned is nil (then it never waits). err is
	// the failure of the read it waited for (offsets are then nil), or
	// ErrGroupClosing when Close ended the wait (see heldOffsets).
	held(maxAge time.Duration, owned func() map[string][]int32) (sent time.Time, offsets map[TopicPartition]int64, err error)
}

// heldOffsets is the last read of heldOffsetsReader. One read runs at a
// time, in a goroutine of its own and outside mu: a caller that needs a
// fresh read while one runs waits for that one instead of sending its
// own, and a caller that reads nothing never waits.
type heldOffsets struct {
	closing <-chan struct{} // closed: waiting for a read ends (ErrGroupClosing); nil: never

	mu      sync.Mutex // guards what follows; never held during a read
	sent    time.Time  // when the last read was sent; zero: never
	offsets map[TopicPartition]int64
	err     error         // the last read's failure
	reading chan struct{} // closed when the read in flight ends; nil: none in flight
}

// get returns the last read and when it was sent, reading again with read
// first when it is maxAge old (never when read is nil, and then it does not
// wait): it waits for that read, or the one in flight, and returns its
// failure, if any. A wait that closing ends returns the last read with
// ErrGroupClosing; the read goes on and is kept when it ends.
func (h *heldOffsets) get(maxAge time.Duration, read func() (map[TopicPartition]int64, error)) (time.Time, map[TopicPartition]int64, error) {
	h.mu.Lock()
	if read == nil || time.Since(h.sent) < maxAge {
		defer h.mu.Unlock()
		return h.sent, h.offsets, nil
	}
	done := h.reading
	if done == nil {
		done = make(chan struct{})
		h.reading = done
		go h.read(time.Now(), read, done)
	}
	h.mu.Unlock()
	var err error
	select {
	case <-done:
	case <-h.closing:
		err = ErrGroupClosing
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		err = h.err
	}
	return h.sent, h.offsets, err
}

// read makes a read sent at sent and keeps its result (offsets nil if it
// failed, so a failed read is not made again before maxAge either); done
// is closed once it is kept.
func (h *heldOffsets) read(sent time.Time, read func() (map[TopicPartition]int64, error), done chan struct{}) {
	offsets, err := read()
	h.mu.Lock()
	h.sent, h.offsets, h.err = sent, offsets, err
	h.reading = nil
	h.mu.Unlock()
	close(done)
}
