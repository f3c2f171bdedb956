package consumergroup

import (
	"context"
	"sync/atomic"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/worker"
)

// handlerClaim is one claimed partition as a handler sees it: the
// sarama.ConsumerGroupClaim its ConsumeClaim reads. Its worker sends on
// msgs and closes it.
type handlerClaim struct {
	worker  *worker.Worker
	initial int64
	msgs    chan *sarama.ConsumerMessage // buffered (ChannelBufferSize); see docs/recall.md
	revoked atomic.Bool                  // set before msgs is closed
	// returned is closed once ConsumeClaim has returned: nobody reads msgs
	// any more.
	returned chan struct{}
	// session is the session as this claim's ConsumeClaim sees it;
	// cancelSession releases its context once ConsumeClaim returned.
	session       claimSession
	cancelSession context.CancelFunc
}

// claimSession is the session one claim's ConsumeClaim is given: the
// session itself, but for a Context of the claim's own, a child of the
// session's, cancelled with it. A handler selects on Context().Done()
// beside every message; with one Done channel for every claim, the claims'
// goroutines would contend for its lock on each message (see
// docs/performance.md, "Per message").
type claimSession struct {
	*handlerSession
	ctx context.Context
}

// Context implements sarama.ConsumerGroupSession: cancelled when the
// session's is.
func (s claimSession) Context() context.Context { return s.ctx }

var _ sarama.ConsumerGroupClaim = (*handlerClaim)(nil)

// Topic implements sarama.ConsumerGroupClaim.
func (c *handlerClaim) Topic() string { return c.worker.Partition().Topic }

// Partition implements sarama.ConsumerGroupClaim.
func (c *handlerClaim) Partition() int32 { return c.worker.Partition().Partition }

// InitialOffset implements sarama.ConsumerGroupClaim: the committed offset
// the claim starts at, or Offsets.Initial (sarama.OffsetOldest or
// sarama.OffsetNewest) when none is stored.
func (c *handlerClaim) InitialOffset() int64 { return c.initial }

// HighWaterMarkOffset implements sarama.ConsumerGroupClaim: the offset the
// next message produced to the partition gets, as of the last message
// fetched (0 before the first).
func (c *handlerClaim) HighWaterMarkOffset() int64 { return c.worker.HighWaterMark() }

// Messages implements sarama.ConsumerGroupClaim. Like sarama's, it is
// buffered (Config.ChannelBufferSize messages, at most 64). It is closed
// when the claim ends (see HandlerGroup.Consume); ConsumeClaim reads what
// it still holds, and must return once it is drained, as under sarama: the
// claim's drain waits up to Offsets.ProcessingTimeout for those marks.
// Whenever the handler must not read what the buffer holds (the claim may
// be lost, the session expired, the instance fenced off from ZooKeeper,
// or the stored offset changed underneath), the partition's worker takes
// it back first; after a fence it is delivered again from the marked
// offset.
func (c *handlerClaim) Messages() <-chan *sarama.ConsumerMessage { return c.msgs }
