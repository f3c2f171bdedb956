package claim

import (
	"context"

	"github.com/zkgroup/kafka/internal/coalesce"
	"github.com/zkgroup/kafka/kazoo"
)

// KazooRegistry is the Registry of one instance of one consumer group, over
// package kazoo: TryClaim is ConsumergroupInstance.Claim, WatchOwner is
// Consumergroup.WatchPartitionOwner and Release is
// ConsumergroupInstance.Release. The kazoo calls take no ctx, and while
// ZooKeeper is unreachable the client holds every request until the
// connection returns or is closed. Release therefore stops waiting when ctx
// is done (see Release); TryClaim and WatchOwner check ctx only before the
// call, because an attempt abandoned in flight could still create an owner
// node that nobody knows of.
//
// Concurrent calls are batched: TryClaims that arrive while a claim is in
// flight go together through ConsumergroupInstance.ClaimBatch, and
// Releases likewise through ReleaseBatch, each partition with the fences
// of its own Claim or Release (docs/coordination.md#claims-and-releases-in-batches).
type KazooRegistry struct {
	group    *kazoo.Consumergroup
	instance *kazoo.ConsumergroupInstance
	claims   *coalesce.Coalescer[kazoo.ClaimRequest, kazoo.ClaimResult]
	releases *coalesce.Coalescer[*kazoo.PartitionClaim, error]
}

// NewKazooRegistry returns the Registry of instance instanceID of group.
// Claims are made under the session of the Kazoo that group came from.
func NewKazooRegistry(group *kazoo.Consumergroup, instanceID string) *KazooRegistry {
	return NewKazooRegistryFor(group, group.Instance(instanceID))
}

// NewKazooRegistryFor is NewKazooRegistry for an instance handle of
// group, such as a static member's (Consumergroup.StaticInstance), whose
// claims never take an owner node of its id under another session.
func NewKazooRegistryFor(group *kazoo.Consumergroup, instance *kazoo.ConsumergroupInstance) *KazooRegistry {
	return &KazooRegistry{
		group:    group,
		instance: instance,
		claims:   coalesce.New(kazoo.MaxBatch, instance.ClaimBatch),
		releases: coalesce.New(kazoo.MaxBatch, instance.ReleaseBatch),
	}
}

// TryClaim implements Registry with ConsumergroupInstance.Claim, batched
// with concurrent calls (ClaimBatch). A call still queued behind a batch
// in flight when ctx ends is withdrawn unsent.
func (r *KazooRegistry) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	return r.TryClaimWatching(ctx, topic, partition, false)
}

// TryClaimWatching is TryClaim that, with watch, also arms a watch on the
// owner node when the batch finds the partition held by another instance,
// and returns it with the error (the claim loop asks for one only when it
// waits on none: see claim/watches.go).
func (r *KazooRegistry) TryClaimWatching(ctx context.Context, topic string, partition int32, watch bool) (*kazoo.PartitionClaim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := r.claims.Do(ctx, kazoo.ClaimRequest{Topic: topic, Partition: partition, Watch: watch})
	if err != nil {
		return nil, err
	}
	if res.OwnerWatch != nil && res.Err != nil {
		return nil, &watchedOwner{err: res.Err, watch: res.OwnerWatch}
	}
	return res.Claim, res.Err
}

// watchedOwner is TryClaim's answer for a partition held by another
// instance when the batch read its owner node with a watch: the claim loop
// waits on that watch instead of arming another with WatchOwner, which
// would read the node a second time (at 512 partitions moving at once,
// 512 reads more for ZooKeeper in the middle of the handoff). It unwraps
// to the batch's error.
type watchedOwner struct {
	err   error
	watch <-chan kazoo.Event
}

func (e *watchedOwner) Error() string { return e.err.Error() }

func (e *watchedOwner) Unwrap() error { return e.err }

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

// Release implements Registry with ConsumergroupInstance.Release, batched
// with concurrent calls (ReleaseBatch), and returns ctx's error as soon as
// ctx is done, even while ZooKeeper is unreachable. A call still queued
// behind a batch in flight is then withdrawn unsent; one already in a
// batch goes on in a goroutine of its own until its request returns: when
// the connection comes back (the release may still apply then; its
// fences, the epoch and, for a release without a read, the instance's
// registration, keep it from touching any later claim) or when the Kazoo is
// closed. So no goroutine outlives the connection.
func (r *KazooRegistry) Release(ctx context.Context, c *kazoo.PartitionClaim) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return untilDone(ctx, func() error {
		err, werr := r.releases.Do(ctx, c)
		if werr != nil {
			return werr // withdrawn unsent
		}
		return err
	})
}

// untilDone runs call in a new goroutine and returns its error, or ctx's
// error once ctx is done, whichever comes first; a result that is ready
// when ctx ends wins. call is never interrupted: an abandoned call ends on
// its own, and its result is dropped.
func untilDone(ctx context.Context, call func() error) error {
	done := make(chan error, 1) // the abandoned call's result: nobody reads it
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		default:
			return ctx.Err()
		}
	}
}
