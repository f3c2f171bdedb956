package claim

import (
	"context"

	"github.com/zkgroup/kafka/kazoo"
)

// KazooRegistry is the Registry of one instance of one consumer group, over
// package kazoo: TryClaim is ConsumergroupInstance.Claim, WatchOwner is
// Consumergroup.WatchPartitionOwner and Release is
// ConsumergroupInstance.Release. The kazoo calls take no ctx: a call in
// flight is bounded by the ZooKeeper session, and ctx is only checked before
// each call.
type KazooRegistry struct {
	group    *kazoo.Consumergroup
	instance *kazoo.ConsumergroupInstance
}

// NewKazooRegistry returns the Registry of instance instanceID of group.
// Claims are made under the session of the Kazoo that group came from.
func NewKazooRegistry(group *kazoo.Consumergroup, instanceID string) *KazooRegistry {
	return &KazooRegistry{group: group, instance: group.Instance(instanceID)}
}

// TryClaim implements Registry with ConsumergroupInstance.Claim.
func (r *KazooRegistry) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.instance.Claim(topic, partition)
}

// WatchOwner implements Registry with Consumergroup.WatchPartitionOwner.
func (r *KazooRegistry) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	owner, ch, err := r.group.WatchPartitionOwner(topic, partition)
	switch {
	case err != nil:
		return "", nil, err
	case owner == nil:
		return "", nil, nil
	case owner.ID == "":
		// An owner node without an id is still an owner: wait for it.
		return "(unnamed)", ch, nil
	}
	return owner.ID, ch, nil
}

// Release implements Registry with ConsumergroupInstance.Release.
func (r *KazooRegistry) Release(ctx context.Context, c *kazoo.PartitionClaim) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.instance.Release(c)
}
