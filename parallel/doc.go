// Package parallel processes the messages of one partition concurrently,
// key by key, behind any sarama.ConsumerGroup: consumergroup.NewConsumerGroup's
// HandlerGroup or sarama.NewConsumerGroup. It uses only sarama's
// interfaces.
//
// NewHandler turns fn, which processes one message, into a
// sarama.ConsumerGroupHandler. Each claim (one partition) runs like this:
//
//  1. Messages are read from the claim's channel while fewer than
//     Config.MaxInFlight messages are held (read and not yet marked); then
//     reading pauses, so memory is bounded whatever one key does.
//  2. A message starts at once unless an earlier message with the same key
//     is held unfinished; it then waits its turn. Messages with different
//     keys run concurrently; messages with the same key run one at a time
//     in offset order. Messages without a key (a nil Key) share one lane
//     under NilKeyInOrder (the default), or each run on their own under
//     NilKeyAnyOrder.
//  3. A failed message is tried again with exponential backoff
//     (Config.Retry). When its retries are exhausted, FailureStop (the
//     default) stops the claim and ConsumeClaim returns a *MessageError;
//     FailureSkip calls Config.OnSkip and counts it as finished.
//  4. Each time the oldest held messages are finished, the last of that
//     contiguous prefix is marked (session.MarkMessage). A message is
//     never marked, nor any message after it, before it has finished.
//
// The claim stops when its channel closes (revoked, lost or fenced), when
// the session's context ends, or when a message fails under FailureStop.
// While MaxInFlight messages are held the channel is not read, so a close
// behind the messages it buffers cannot show; the claim then checks every
// 100 ms whether session.Claims() still lists it (HandlerGroup drops a
// claim from it as it closes the channel; under sarama a revoke ends the
// session's context).
// Then no new work starts: nothing more is read, messages waiting behind
// their key never start, and no retry begins. The messages running get
// Config.DrainTimeout to finish and be marked; then fn's context is
// cancelled and ConsumeClaim returns at once. Marks stop at the first
// unfinished message, which the partition's next owner delivers again
// with everything after it. When messages are left unfinished, ConsumeClaim
// calls session.ResetOffset with the position already marked, so that
// consumergroup's HandlerGroup does not wait Offsets.ProcessingTimeout for
// marks that cannot come (under sarama it changes nothing).
//
// What is not guaranteed: fn's context ends only when the drain gives up,
// and a fn that ignores it runs on after ConsumeClaim returned, maybe
// while the partition's next owner processes the same key. A claim that
// returns while its session runs (a message failed under FailureStop)
// ends the whole session on both groups, as sarama's does; the caller's
// loop around Consume starts a new one, which delivers the failed message
// again from the committed offset. After a crash, the messages finished
// but not yet marked (at most MaxInFlight per partition) are processed
// again.
//
// consumergroup's Messages() API has no adapter: its one channel carries
// every partition and never tells that a partition moved, so no new work
// could stop on a revoke, and pausing it for one stalled partition would
// stall all. See docs/parallel.md for the design and measurements.
package parallel
