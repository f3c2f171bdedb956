package assign

import (
	"cmp"
	"fmt"
	"slices"
)

// Partition is one partition of a topic as the assignment sees it: its ID
// and the broker ID of its current leader (-1 if it has none).
type Partition struct {
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
// strategy's order (for RangeByLeader, the lowest leader).
//
// A group calls it for each of its topics with the instances whose
// registration subscribes to that topic (see Topics), which is every
// instance when all consume the same topics, as upstream assumes.
//
// It returns ErrUnknownStrategy (wrapped) for an unknown strategy, and for
// Sticky, whose result depends on the topic's name: use AssignTopic.
func Assign(strategy Strategy, instanceIDs []string, partitions []Partition) (map[string][]Partition, error) {
	var less func(a, b Partition) int
	switch strategy {
	case Sticky:
		return nil, fmt.Errorf("%w: %q depends on the topic's name; use AssignTopic", ErrUnknownStrategy, string(strategy))
	case RangeByLeader:
		less = func(a, b Partition) int {
			return cmp.Or(cmp.Compare(a.Leader, b.Leader), cmp.Compare(a.ID, b.ID))
		}
	case RangeByID:
		less = func(a, b Partition) int {
			return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Leader, b.Leader))
		}
	default:
		return nil, fmt.Errorf("%w: %q (want %q or %q)", ErrUnknownStrategy, string(strategy), RangeByLeader, RangeByID)
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
func dedupePartitions(parts []Partition) []Partition {
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
func divideRanges(instances []string, parts []Partition) map[string][]Partition {
	result := make(map[string][]Partition)
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
