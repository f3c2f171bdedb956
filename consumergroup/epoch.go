package consumergroup

import (
	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// Fencing tokens: the epoch of the claim a message was delivered under,
// for a sink to refuse the writes of an owner that was cut off after its
// successor wrote (see docs/fencing-tokens.md).

// ClaimEpoch returns the fencing token of a claim a HandlerGroup's
// ConsumeClaim reads: the epoch of this instance's claim of the partition
// (the version of /consumers/<g>/epochs/<t>/<p> the claim set). Every
// message of the claim was delivered under that epoch, and every later
// claim of the partition, by any instance, has a higher one. ok is false
// for a claim that is not one of HandlerGroup's (sarama's own, a test's).
func ClaimEpoch(claim sarama.ConsumerGroupClaim) (epoch int64, ok bool) {
	c, isOurs := claim.(*handlerClaim)
	if !isOurs || c == nil || c.worker == nil {
		return 0, false
	}
	pc := c.worker.Claim()
	if pc == nil {
		return 0, false
	}
	return int64(pc.Epoch), true
}

// Epoch returns the epoch of this instance's current claim of the
// partition; ok is false while the instance does not own it. A message
// Messages() delivered before the claim was lost and taken again carries
// the older epoch, which Epoch no longer returns: stamp messages with
// MessageEpoch, which answers for the message itself. Epoch is for what
// is not a message (a sink's set-up, a status page).
func (cg *ConsumerGroup) Epoch(topic string, partition int32) (epoch int64, ok bool) {
	o := cg.ownedPartition(topic, partition)
	if o == nil {
		return 0, false
	}
	return int64(o.Claim.Epoch), true
}

// MessageEpoch returns the fencing token of msg, a message Messages()
// delivered: the epoch of the claim it was delivered under, while that
// claim is this instance's current claim of msg's partition (until the
// partition is released: after its drain, with its final commit). ok is
// false once that claim has ended (the partition was released, lost or
// taken again since; a new claim's epoch is never lent to an older
// message), and for a message this group did not deliver. A sink writes
// msg's effects only with ok true, conditioned on the epoch.
func (cg *ConsumerGroup) MessageEpoch(msg *sarama.ConsumerMessage) (epoch int64, ok bool) {
	if msg == nil {
		return 0, false
	}
	o := cg.ownedPartition(msg.Topic, msg.Partition)
	if o == nil || !o.DeliveredUnderClaim(msg) {
		return 0, false
	}
	return int64(o.Claim.Epoch), true
}

// ownedPartition returns the tracked offsets of a partition this instance
// owns under a claim, or nil.
func (cg *ConsumerGroup) ownedPartition(topic string, partition int32) *offsets.Partition {
	if cg.offsetManager == nil || cg.closed.Load() {
		return nil
	}
	o := cg.offsetManager.Lookup(offsets.TopicPartition{Topic: topic, Partition: partition})
	if o == nil || o.Claim == nil || o.Lost() {
		return nil
	}
	return o
}
