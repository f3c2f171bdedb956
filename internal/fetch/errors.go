package fetch

import "fmt"

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
