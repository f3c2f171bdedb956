package consumergroup

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// AssignmentStrategy names a way of dividing a topic's partitions between the
// instances of a group. Every instance computes the assignment on its own, so
// all instances of a group must use the same strategy.
type AssignmentStrategy string

const (
	// StrategyRangeByLeader is upstream's assignment, and the default. The
	// instance IDs are sorted (byte-wise), the partitions are sorted by
	// leader broker ID and then by partition ID, and the sorted partitions
	// are cut into consecutive ranges, one per instance in order: with P
	// partitions and C instances each instance gets P/C partitions and the
	// first P%C instances one more. With more instances than partitions the
	// last instances get none.
	StrategyRangeByLeader AssignmentStrategy = "range-by-leader"

	// StrategyRangeByID is StrategyRangeByLeader with partitions sorted by
	// ID only, so a change of leader never moves a partition to another
	// instance. It does not agree with upstream instances; switch a whole
	// group at once.
	StrategyRangeByID AssignmentStrategy = "range-by-id"
)

// ErrUnknownStrategy is returned by Assign for a strategy it does not know.
var ErrUnknownStrategy = errors.New("consumergroup: unknown assignment strategy")

func (s AssignmentStrategy) valid() bool {
	return s == StrategyRangeByLeader || s == StrategyRangeByID
}

// PartitionInfo is one partition of a topic as the assignment sees it: its ID
// and the broker ID of its current leader (-1 if it has none).
type PartitionInfo struct {
	ID     int32
	Leader int32
}

// Assign divides partitions between instanceIDs with the given strategy and
// returns each instance's partitions in the strategy's order. It is a pure
// function: it does not modify its arguments, and its result depends only on
// the sets of instance IDs and partitions, not on their order.
//
// As upstream, an instance that gets no partition has no entry in the map,
// and with no instances the map is empty. Input from ZooKeeper has no
// duplicates; should there be any, a repeated instance ID counts once and a
// repeated partition ID is assigned once, with the first entry in the
// strategy's order (for StrategyRangeByLeader, the lowest leader).
//
// A ConsumerGroup calls it for each of its topics with the instances whose
// registration subscribes to that topic, which is every instance when all
// consume the same topics, as upstream assumes.
//
// It returns ErrUnknownStrategy (wrapped) for an unknown strategy.
func Assign(strategy AssignmentStrategy, instanceIDs []string, partitions []PartitionInfo) (map[string][]PartitionInfo, error) {
	var less func(a, b PartitionInfo) int
	switch strategy {
	case StrategyRangeByLeader:
		less = func(a, b PartitionInfo) int {
			return cmp.Or(cmp.Compare(a.Leader, b.Leader), cmp.Compare(a.ID, b.ID))
		}
	case StrategyRangeByID:
		less = func(a, b PartitionInfo) int {
			return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Leader, b.Leader))
		}
	default:
		return nil, fmt.Errorf("%w: %q (want %q or %q)", ErrUnknownStrategy, string(strategy), StrategyRangeByLeader, StrategyRangeByID)
	}

	instances := slices.Clone(instanceIDs)
	slices.Sort(instances)
	instances = slices.Compact(instances)

	parts := slices.Clone(partitions)
	slices.SortFunc(parts, less)
	parts = dedupePartitions(parts)

	return divideRanges(instances, parts), nil
}

// dedupePartitions keeps the first entry of each partition ID of a sorted
// slice, in place.
func dedupePartitions(parts []PartitionInfo) []PartitionInfo {
	seen := make(map[int32]bool, len(parts))
	out := parts[:0]
	for _, p := range parts {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	return out
}

// divideRanges cuts the sorted partitions into consecutive ranges for the
// sorted instances: each gets len(parts)/len(instances), and the first
// len(parts)%len(instances) instances one more.
func divideRanges(instances []string, parts []PartitionInfo) map[string][]PartitionInfo {
	result := make(map[string][]PartitionInfo)
	if len(instances) == 0 {
		return result
	}
	per, extra := len(parts)/len(instances), len(parts)%len(instances)
	first := 0
	for i, id := range instances {
		n := per
		if i < extra {
			n++
		}
		if n > 0 {
			result[id] = slices.Clip(parts[first : first+n])
		}
		first += n
	}
	return result
}
