package topics

import "github.com/zkgroup/kafka/kazoo"

// Kazoo is the ZooKeeper of a ZooKeeperSource over package kazoo: the
// Topic, Partition and Session methods of a *kazoo.Kazoo.
type Kazoo struct{ kz *kazoo.Kazoo }

// NewKazoo returns the ZooKeeper that reads through kz.
func NewKazoo(kz *kazoo.Kazoo) Kazoo { return Kazoo{kz} }

// Partitions implements ZooKeeper with Topic.Partitions.
func (k Kazoo) Partitions(topic string) ([]int32, error) {
	parts, err := k.kz.Topic(topic).Partitions()
	return partitionIDs(parts), err
}

// WatchPartitions implements ZooKeeper with Topic.WatchPartitions.
func (k Kazoo) WatchPartitions(topic string) ([]int32, <-chan kazoo.Event, error) {
	parts, ch, err := k.kz.Topic(topic).WatchPartitions()
	return partitionIDs(parts), ch, err
}

// Leader implements ZooKeeper with Partition.State.
func (k Kazoo) Leader(topic string, partition int32) (int32, error) {
	state, err := k.kz.Topic(topic).Partition(partition, nil).State()
	if err != nil {
		return -1, err
	}
	return state.Leader, nil
}

// WatchLeader implements ZooKeeper with Partition.WatchState.
func (k Kazoo) WatchLeader(topic string, partition int32) (int32, <-chan kazoo.Event, error) {
	state, ch, err := k.kz.Topic(topic).Partition(partition, nil).WatchState()
	if err != nil {
		return -1, ch, err
	}
	return state.Leader, ch, nil
}

// WatchTopics implements ZooKeeper with Kazoo.WatchTopics.
func (k Kazoo) WatchTopics() (<-chan kazoo.Event, error) {
	_, ch, err := k.kz.WatchTopics()
	return ch, err
}

// Generation implements ZooKeeper with Kazoo.Session.
func (k Kazoo) Generation() uint64 {
	s, _ := k.kz.Session()
	return s.Generation
}

func partitionIDs(parts kazoo.PartitionList) []int32 {
	if parts == nil {
		return nil
	}
	ids := make([]int32, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	return ids
}
