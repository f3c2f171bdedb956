package fetch

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// FallbackError reports a partition handed from the batch feed to
// sarama's partition consumer: the feed ended with Err, an error retrying
// does not mend (or a *RetriesExhaustedError), and the partition is read
// through sarama's partition consumer from Offset on until its fetch
// restarts (a seek, a pause that took messages back, the next claim).
// Nothing is skipped: Offset is the one after the last message handed out.
type FallbackError struct {
	Topic     string
	Partition int32
	Offset    int64 // where sarama's partition consumer goes on
	Err       error // what ended the feed
}

// Error names the partition, the offset and the cause.
func (e *FallbackError) Error() string {
	return fmt.Sprintf("consumergroup: batch fetch of %s/%d ended; reading through sarama's partition consumer from offset %d: %v",
		e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns what ended the feed.
func (e *FallbackError) Unwrap() error { return e.Err }

// RetriesExhaustedError reports a fetch that failed with an error retrying
// normally mends (a moved leader, a broken connection) Retries times in a
// row at Offset, each after the retry backoff and a metadata refresh. Err
// is the last failure.
type RetriesExhaustedError struct {
	Topic     string
	Partition int32
	Offset    int64
	Retries   int
	Err       error
}

// Error names the partition, the offset, the retries and the last error.
func (e *RetriesExhaustedError) Error() string {
	return fmt.Sprintf("consumergroup: fetch of %s/%d at offset %d failed after %d retries: %v",
		e.Topic, e.Partition, e.Offset, e.Retries, e.Err)
}

// Unwrap returns the last failure.
func (e *RetriesExhaustedError) Unwrap() error { return e.Err }

// TruncationError reports a partition whose log ends below the position
// it was read at: a fetch at Position, a position reached by reading,
// answered OFFSET_OUT_OF_RANGE and the leader's log now ends at LogEnd,
// below it (an unclean leader election, or a follower behind us promoted).
// The messages from LogEnd to Position that were handed out are gone from
// the log; reading resumes at LogEnd, where the new leader's messages
// follow, and no mark of the messages that are gone is committed past it.
// Where LogEnd is below the committed offset, it is stored as a reset is
// (ZooKeeper offsets: the claim ends and is taken again). LogEnd is the
// log's end when the truncation was found, not where the logs diverged
// (that needs OffsetForLeaderEpoch, which sarama does not send): messages
// the new leader took before then, below LogEnd, are not read. It unwraps
// to sarama.ErrOffsetOutOfRange. See docs/batch-feed.md, "Out of range
// mid-stream".
type TruncationError struct {
	Topic     string
	Partition int32
	Position  int64 // the offset fetched
	LogEnd    int64 // the leader's log end (high-water mark): reading resumes here
}

// Error names the partition, the position and the log's end.
func (e *TruncationError) Error() string {
	return fmt.Sprintf("consumergroup: %s/%d was truncated below offset %d: the log ends at %d; resuming there",
		e.Topic, e.Partition, e.Position, e.LogEnd)
}

// Unwrap returns sarama.ErrOffsetOutOfRange, the broker's answer.
func (e *TruncationError) Unwrap() error { return sarama.ErrOffsetOutOfRange }

// RetentionError reports a partition whose log now starts above the
// position it was read at: a fetch at Position, a position reached by
// reading, answered OFFSET_OUT_OF_RANGE and the log starts at LogStart
// (retention or DeleteRecords removed messages not read yet). The
// messages from Position to LogStart are skipped: reading resumes at
// LogStart, which is committed before anything after it is handed out.
// It unwraps to sarama.ErrOffsetOutOfRange. See docs/batch-feed.md, "Out
// of range mid-stream".
type RetentionError struct {
	Topic     string
	Partition int32
	Position  int64 // the offset fetched
	LogStart  int64 // the log's first offset: reading resumes here
}

// Error names the partition, the position and the log's start.
func (e *RetentionError) Error() string {
	return fmt.Sprintf("consumergroup: %s/%d lost offsets %d to %d to retention before they were read: the log starts at %d; resuming there",
		e.Topic, e.Partition, e.Position, e.LogStart-1, e.LogStart)
}

// Unwrap returns sarama.ErrOffsetOutOfRange, the broker's answer.
func (e *RetentionError) Unwrap() error { return sarama.ErrOffsetOutOfRange }

// LostPosition reports whether err says a partition's position left the
// log's range mid-stream (a *TruncationError or a *RetentionError, as a
// Source's end or Partition.Open's error), and where reading resumes.
func LostPosition(err error) (resume int64, ok bool) {
	var trunc *TruncationError
	if errors.As(err, &trunc) {
		return trunc.LogEnd, true
	}
	var ret *RetentionError
	if errors.As(err, &ret) {
		return ret.LogStart, true
	}
	return 0, false
}

// topLevelError is the error of a Fetch response's own error code (v7 on),
// nil for none. It fails the round: every want of it gets the error, as
// when the request itself failed. The partitions of such a response come
// back empty, and read as answered they would be fetched again and again
// without a word; as an error the feed retries what is retriable and
// otherwise falls back, reported (see feed_retry.go). Kafka sets it for
// fetch sessions, which these rounds do not open, so a broker sets it
// only when something is wrong with the request as a whole.
func topLevelError(code sarama.KError) error {
	if code == sarama.ErrNoError {
		return nil
	}
	return fmt.Errorf("fetch response: %w", code)
}
