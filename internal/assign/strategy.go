package assign

import "errors"

// Strategy names a way of dividing a topic's partitions between the
// instances of a group. Every instance computes the assignment on its own,
// so all instances of a group must use the same strategy.
type Strategy string

const (
	// RangeByLeader is upstream's assignment. The
	// instance IDs are sorted (byte-wise), the partitions are sorted by
	// leader broker ID and then by partition ID, and the sorted partitions
	// are cut into consecutive ranges, one per instance in order: with P
	// partitions and C instances each instance gets P/C partitions and the
	// first P%C instances one more. With more instances than partitions the
	// last instances get none.
	RangeByLeader Strategy = "range-by-leader"

	// RangeByID is RangeByLeader with partitions sorted by ID only, so a
	// change of leader never moves a partition to another instance. It
	// does not agree with upstream instances; switch a whole group at once.
	RangeByID Strategy = "range-by-id"

	// Sticky moves as few partitions as it can when a member joins or
	// leaves: rendezvous hashing with bounded load (see Rendezvous), each
	// topic's load as even as range's. An instance configured with it
	// offers it in its registration and uses it only while every
	// registered member of the group offers it, RangeByLeader otherwise,
	// as upstream instances do, so a mixed fleet agrees. See
	// docs/assignment.md.
	Sticky Strategy = "sticky"
)

// ErrUnknownStrategy is returned by Assign for a strategy it does not know.
var ErrUnknownStrategy = errors.New("consumergroup: unknown assignment strategy")

// Valid reports whether s is a strategy a group can be configured with.
func (s Strategy) Valid() bool {
	return s == RangeByLeader || s == RangeByID || s == Sticky
}

// UsesLeaders reports whether the assignment under s can depend on the
// partitions' leaders: RangeByLeader, and Sticky, which falls back to it.
func (s Strategy) UsesLeaders() bool {
	return s == RangeByLeader || s == Sticky
}
