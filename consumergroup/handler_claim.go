package consumergroup

import (
	"sync/atomic"

	"github.com/IBM/sarama"
)

// handlerClaim is one claimed partition as a handler sees it: the
// sarama.ConsumerGroupClaim its ConsumeClaim reads. Its worker sends on
// msgs and closes it.
type handlerClaim struct {
	worker  *partitionWorker
	initial int64
	msgs    chan *sarama.ConsumerMessage // unbuffered, as Messages()
	revoked atomic.Bool                  // set before msgs is closed
}

var _ sarama.ConsumerGroupClaim = (*handlerClaim)(nil)

// Topic implements sarama.ConsumerGroupClaim.
func (c *handlerClaim) Topic() string { return c.worker.tp.Topic }

// Partition implements sarama.ConsumerGroupClaim.
func (c *handlerClaim) Partition() int32 { return c.worker.tp.Partition }

// InitialOffset implements sarama.ConsumerGroupClaim: the committed offset
// the claim starts at, or Offsets.Initial (sarama.OffsetOldest or
// sarama.OffsetNewest) when none is stored.
func (c *handlerClaim) InitialOffset() int64 { return c.initial }

// HighWaterMarkOffset implements sarama.ConsumerGroupClaim: the offset the
// next message produced to the partition gets, as of the last message
// fetched (0 before the first).
func (c *handlerClaim) HighWaterMarkOffset() int64 { return c.worker.hwm.Load() }

// Messages implements sarama.ConsumerGroupClaim. It is unbuffered, as
// ConsumerGroup.Messages(): a message is handed over only when ConsumeClaim
// takes it, so a claim that ends strands nothing for the next owner to
// deliver again. It is closed when the claim ends (see
// HandlerGroup.Consume); ConsumeClaim must then return.
func (c *handlerClaim) Messages() <-chan *sarama.ConsumerMessage { return c.msgs }
