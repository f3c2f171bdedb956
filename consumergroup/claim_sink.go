package consumergroup

import (
	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// claimSink decides where the messages of each claimed partition go. A
// partition worker calls open once its partition is claimed and its
// stored offset is tracked (owned, starting at next; negative: none
// stored), before it fetches anything, and hands every message to the
// channel open returns; it calls close once it hands out nothing more
// (stopped, the claim lost, the session gone), before it waits for marks,
// commits and releases. Both run on the worker's goroutine, so the side that
// sends on the channel is the side that closes it.
//
// There are two sinks: the group's shared Messages() channel
// (JoinConsumerGroup), and a channel of each claim's own, read by a
// handler's ConsumeClaim (HandlerGroup.Consume). Everything else a worker
// does (claim, fence, drain, commit, release) is the same for both.
type claimSink interface {
	// open returns the channel for w's messages, or nil when w must not
	// consume after all (stopped, or its claim lost, while open waited).
	open(w *partitionWorker, owned *offsets.Partition, next int64) chan *sarama.ConsumerMessage
	// close ends what open started: nothing more is sent on its channel.
	close(w *partitionWorker)
}

// messagesSink hands every partition's messages to Messages().
type messagesSink struct{ cg *ConsumerGroup }

func (s messagesSink) open(*partitionWorker, *offsets.Partition, int64) chan *sarama.ConsumerMessage {
	return s.cg.messages
}

func (messagesSink) close(*partitionWorker) {}

// claimSink returns the group's sink: Messages() unless Consume set one.
func (cg *ConsumerGroup) claimSink() claimSink {
	if cg.sink != nil {
		return cg.sink
	}
	return messagesSink{cg}
}
