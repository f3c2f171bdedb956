package worker

import (
	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// Sink decides where the messages of a claimed partition go. A worker
// calls Open once its partition is claimed and its stored offset is
// tracked (owned, starting at next; negative: none stored), before it
// fetches anything, and hands every message to the channel Open returns;
// it calls Close once it hands out nothing more (stopped, the claim lost,
// the session gone), before it waits for marks, commits and releases.
// Both run on the worker's goroutine, so the side that sends on the
// channel is the side that closes it.
//
// There are two sinks: the group's shared Messages() channel, and a
// channel of each claim's own, read by a handler's ConsumeClaim.
// Everything else a worker does is the same for both.
type Sink interface {
	// Open returns the channel for w's messages, or nil when w must not
	// consume after all (stopped, or its claim lost, while Open waited).
	// readerGone, when not nil, is closed once nobody reads the channel
	// any more (a handler's ConsumeClaim returned).
	Open(w *Worker, owned *offsets.Partition, next int64) (out chan *sarama.ConsumerMessage, readerGone <-chan struct{})
	// Close ends what Open started: nothing more is sent on its channel.
	Close(w *Worker)
}

// SharedSink is a Sink whose one channel every partition shares: the
// group's Messages(). When it is buffered (Outbox not nil), a worker sends
// through the Outbox and takes back only its own partition's messages
// from it, and a clean stop takes them back as well, since the
// application reads them in no particular time: nothing of a partition
// may stay in it once its worker stops handing out. See docs/recall.md,
// "A shared buffer".
type SharedSink interface {
	Sink
	// Outbox returns the shared channel's outbox; nil when the channel is
	// unbuffered.
	Outbox() *Outbox
}
