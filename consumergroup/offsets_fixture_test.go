package consumergroup

import (
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// newTestOffsetManager returns cg's offset manager without its commit loop,
// made its offsetManager.
func newTestOffsetManager(cg *ConsumerGroup) *offsetManager {
	om := newOffsetManager(cg, &OffsetManagerConfig{})
	cg.offsetManager = om
	return om
}

// adoptAt starts tracking tp for w at next, no offset node stored.
func (om *offsetManager) adoptAt(tp topicPartition, c *kazoo.PartitionClaim, next int64, w *partitionWorker) *offsets.Partition {
	st := offsets.Stored{ZkNext: next, ZkVersion: -1, KafkaNext: -1}
	if w == nil {
		return om.Adopt(offsets.TopicPartition(tp), c, st, nil)
	}
	return om.Adopt(offsets.TopicPartition(tp), c, st, w)
}
