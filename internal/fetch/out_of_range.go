package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// logRangeClient is the part of sarama.Client that asks a partition's
// leader for its log's first offset and its end; a Client without it
// leaves every offset out of range to Offsets.Initial, as upstream does.
type logRangeClient interface {
	GetOffset(topic string, partition int32, time int64) (int64, error)
}

// readPositions knows how far a partition was read at this claim, and
// tells what an OFFSET_OUT_OF_RANGE answer at a position read through
// means: the log was truncated below it (*TruncationError), retention
// removed it (*RetentionError), or the answer was stale
// (errStaleOutOfRange, retried). An offset out of range that was never
// read through (a stored offset as the claim starts, a seek forward) is
// left to Offsets.Initial. See docs/batch-feed.md, "Out of range
// mid-stream". Safe for concurrent use: the feed's goroutine and the
// worker's both note positions.
type readPositions struct {
	client    Client
	topic     string
	partition int32
	reached   atomic.Int64 // the highest position read through (-1: none)
}

func newReadPositions(client Client, topic string, partition int32) *readPositions {
	r := &readPositions{client: client, topic: topic, partition: partition}
	r.reached.Store(-1)
	return r
}

// reach notes that the partition was read through to position: a fetch
// at it answered, the message before it was handed out, or a
// *RetentionError resumes there. Nil: nothing is noted.
func (r *readPositions) reach(position int64) {
	if r == nil {
		return
	}
	for {
		old := r.reached.Load()
		if position <= old || r.reached.CompareAndSwap(old, position) {
			return
		}
	}
}

// errStaleOutOfRange says a fetch answered OFFSET_OUT_OF_RANGE at a
// position the leader's log holds after all (a stale leader's answer): it
// is retried like a moved leader (see retriableFeedError).
var errStaleOutOfRange = errors.New("offset out of range, but within the log's range")

// explain returns what err, the answer to a fetch or an open at position,
// means: err itself unless it is OFFSET_OUT_OF_RANGE at a position read
// through; then a *TruncationError (the log ends below position), a
// *RetentionError (it starts above), errStaleOutOfRange wrapped with the
// range (it holds position), or the error of looking the range up. It
// asks the leader after a metadata refresh. sarama's requests take no
// context, so they run apart and explain returns ctx's error as soon as
// ctx ends: a stop never waits for a broker that does not answer. A nil
// readPositions explains nothing.
func (r *readPositions) explain(ctx context.Context, position int64, err error) error {
	if r == nil || !errors.Is(err, sarama.ErrOffsetOutOfRange) || position < 0 || position > r.reached.Load() {
		return err
	}
	c, ok := r.client.(logRangeClient)
	if !ok {
		return err
	}
	answer := make(chan error, 1) // the lookup never blocks on it
	go func() { answer <- r.lookUp(c, position) }()
	select {
	case explained := <-answer:
		return explained
	case <-ctx.Done():
		return fmt.Errorf("offset %d out of range; stopped looking up the log's range: %w", position, ctx.Err())
	}
}

// lookUp asks the partition's leader for its log's range and says where
// position stands in it (see explain).
func (r *readPositions) lookUp(c logRangeClient, position int64) error {
	_ = r.client.RefreshMetadata(r.topic) // a leader gone: GetOffset refreshes again and says so
	start, lerr := c.GetOffset(r.topic, r.partition, sarama.OffsetOldest)
	if lerr != nil {
		return fmt.Errorf("offset %d out of range; look up the log's start: %w", position, lerr)
	}
	end, lerr := c.GetOffset(r.topic, r.partition, sarama.OffsetNewest)
	if lerr != nil {
		return fmt.Errorf("offset %d out of range; look up the log's end: %w", position, lerr)
	}
	switch {
	case position > end:
		return &TruncationError{Topic: r.topic, Partition: r.partition, Position: position, LogEnd: end}
	case position < start:
		// The reader resumes at start: should retention remove more
		// before it is read, that is retention again, not a stored
		// offset for Offsets.Initial.
		r.reach(start)
		return &RetentionError{Topic: r.topic, Partition: r.partition, Position: position, LogStart: start}
	}
	return fmt.Errorf("%w: %d in [%d, %d]", errStaleOutOfRange, position, start, end)
}
