package kazoo

import (
	"errors"
	"fmt"
)

// Errors of consumer groups, instances and claims. The first five are
// kazoo-go's, with the same names, and the methods kazoo-go had return them
// bare, so == works (the details are logged through Config.Logger). Claim
// and Release, which kazoo-go did not have, wrap them with the details.
var (
	ErrRunningInstances          = errors.New("kazoo: cannot deregister a consumergroup with running instances")
	ErrInstanceAlreadyRegistered = errors.New("kazoo: cannot register consumer instance because it already is registered")
	ErrInstanceNotRegistered     = errors.New("kazoo: consumer instance is not registered")
	ErrPartitionClaimedByOther   = errors.New("kazoo: cannot claim partition: it is already claimed by another instance")
	ErrPartitionNotClaimed       = errors.New("kazoo: cannot release partition: it is not claimed by this instance")

	// ErrClaimLost: a fenced operation (commit, release) was refused because
	// the partition's epoch moved: another claim happened since ours, so we
	// no longer own the partition. Nothing was changed.
	ErrClaimLost = errors.New("kazoo: claim lost: the partition's epoch moved")

	// ErrOffsetConflict: a fenced commit was refused because the offset node
	// changed underneath while we still own the partition (an operator
	// reset it, say). It is wrapped in an *OffsetConflictError.
	ErrOffsetConflict = errors.New("kazoo: offset changed underneath")
)

// PartitionClaim is proof that one instance owns one partition under one
// ZooKeeper session. It is returned by ConsumergroupInstance.Claim and
// fences the commits and the release of that ownership.
type PartitionClaim struct {
	Topic      string
	Partition  int32
	InstanceID string
	// SessionID is the ZooKeeper session that owns the ephemeral owner node
	// (its Stat.EphemeralOwner).
	SessionID int64
	// Epoch is the version of /consumers/<group>/epochs/<topic>/<partition>
	// that this claim's Multi produced. Any later claim by anyone moves it.
	Epoch int32
	// EpochCzxid is the creation zxid of the epoch node the claim bumped. A
	// node deleted and created again starts its version at 0, so a claim
	// compares both: a different czxid means the claim is gone even if the
	// version matches. 0 when unknown.
	EpochCzxid int64
	// OwnerVersion is the owner node's version this claim created (1: a
	// claim creates the node and sets it once in the same Multi) or found
	// (a claim of a node already ours); 0 when unknown. Release deletes a
	// node at this version, fenced by the epoch, without reading it first:
	// only claims make owner nodes at version 1 or more, while upstream
	// members' and operators' nodes stay at version 0. See
	// docs/coordination.md#releases-without-a-read.
	OwnerVersion int32
}

func (c *PartitionClaim) String() string {
	return fmt.Sprintf("%s/%d by %s (session %#x, epoch %d)", c.Topic, c.Partition, c.InstanceID, c.SessionID, c.Epoch)
}

// OffsetConflictError reports a fenced commit refused because the stored
// offset node's version was not the one expected. Stored and Version are
// what the node holds now (Stored is -1 and Version -1 if it was deleted).
type OffsetConflictError struct {
	Topic     string
	Partition int32
	Stored    int64
	Version   int32
}

func (e *OffsetConflictError) Error() string {
	return fmt.Sprintf("kazoo: offset of %s/%d changed underneath: stored %d (version %d)", e.Topic, e.Partition, e.Stored, e.Version)
}

// Unwrap returns ErrOffsetConflict.
func (e *OffsetConflictError) Unwrap() error { return ErrOffsetConflict }
