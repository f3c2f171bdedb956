package claim

import (
	"context"

	"github.com/zkgroup/kafka/kazoo"
)

// Registry is what the claim loop drives: the three ZooKeeper operations on
// one instance's view of one consumer group. NewKazooRegistry implements it
// over package kazoo. Implementations must be safe for concurrent use (one
// Claimer claims many partitions at once). ctx bounds the call where the
// implementation can honour it.
type Registry interface {
	// TryClaim makes one race-free attempt to own topic/partition. It
	// returns an error wrapping kazoo.ErrPartitionClaimedByOther when another
	// live owner holds it, and may return kazoo.ErrNoNode-wrapping errors
	// when the owner vanished mid-attempt.
	TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error)

	// WatchOwner returns the current owner's instance id and a one-shot
	// channel that delivers (or is closed) when the owner node changes or is
	// deleted. It returns "", nil, nil when nobody owns the partition now.
	// Every event, including kazoo.EventNotWatching and a closed channel,
	// makes the loop try again at once.
	WatchOwner(ctx context.Context, topic string, partition int32) (owner string, changed <-chan kazoo.Event, err error)

	// Release gives up c, fenced by its epoch: it returns an error wrapping
	// kazoo.ErrClaimLost, and changes nothing, if anyone claimed the
	// partition since c.
	Release(ctx context.Context, c *kazoo.PartitionClaim) error
}
