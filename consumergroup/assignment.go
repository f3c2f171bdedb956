package consumergroup

import "github.com/zkgroup/kafka/internal/assign"

// AssignmentStrategy names a way of dividing a topic's partitions between the
// instances of a group. Every instance computes the assignment on its own, so
// all instances of a group must use the same strategy.
type AssignmentStrategy = assign.Strategy

const (
	// StrategySticky moves as few partitions as it can when an instance
	// joins or leaves, and is the default: each topic's partitions go by
	// rendezvous hashing with bounded load, as even as range's (see
	// AssignTopic). An instance with it offers it in its registration
	// ("assignment": ["sticky"]) and uses it only while every registered
	// instance of the group offers it, StrategyRangeByLeader otherwise,
	// so it agrees with upstream instances. See docs/assignment.md.
	StrategySticky AssignmentStrategy = assign.Sticky

	// StrategyRangeByLeader is upstream's assignment. The
	// instance IDs are sorted (byte-wise), the partitions are sorted by
	// leader broker ID and then by partition ID, and the sorted partitions
	// are cut into consecutive ranges, one per instance in order: with P
	// partitions and C instances each instance gets P/C partitions and the
	// first P%C instances one more. With more instances than partitions the
	// last instances get none.
	StrategyRangeByLeader AssignmentStrategy = assign.RangeByLeader

	// StrategyRangeByID is StrategyRangeByLeader with partitions sorted by
	// ID only, so a change of leader never moves a partition to another
	// instance. It does not agree with upstream instances; switch a whole
	// group at once.
	StrategyRangeByID AssignmentStrategy = assign.RangeByID
)

// ErrUnknownStrategy is returned by Assign for a strategy it does not know.
var ErrUnknownStrategy = assign.ErrUnknownStrategy

// PartitionInfo is one partition of a topic as the assignment sees it: its ID
// and the broker ID of its current leader (-1 if it has none).
type PartitionInfo = assign.Partition

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
// It returns ErrUnknownStrategy (wrapped) for an unknown strategy, and for
// StrategySticky, whose result depends on the topic's name: use AssignTopic.
func Assign(strategy AssignmentStrategy, instanceIDs []string, partitions []PartitionInfo) (map[string][]PartitionInfo, error) {
	return assign.Assign(strategy, instanceIDs, partitions)
}

// AssignTopic is Assign for one named topic. For StrategySticky it returns
// what every instance computes once all offer it: rendezvous hashing with
// bounded load: P/N partitions each, P%N instances one more, as range,
// each share sorted by ID (docs/assignment.md has the definition). For the
// range strategies it is Assign.
func AssignTopic(strategy AssignmentStrategy, topic string, instanceIDs []string, partitions []PartitionInfo) (map[string][]PartitionInfo, error) {
	return assign.AssignTopic(strategy, topic, instanceIDs, partitions)
}
