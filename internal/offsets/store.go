package offsets

// Store is where the group's committed offsets live: ZooKeeper, Kafka's
// group offsets, or both (dual). The committer decides when a partition is
// committed; the Store decides what that means for its stores.
type Store interface {
	// Read returns what the stores hold for tp as it is claimed.
	Read(tp TopicPartition) (Stored, error)
	// Commit writes o's position: next, pending when dirty. The caller
	// holds o's commit lock and has checked that o may commit.
	Commit(o *Partition, next int64, dirty bool) error
	// Due reports whether Commit has something to do for o although
	// nothing is pending (a store that must be written again).
	Due(o *Partition) bool
	// RewindAsReset stores next, below the stored offset, the way a reset
	// does, ending the claim; applies is false where the store cannot
	// (it knows no epochs), and the owner then restarts without it.
	RewindAsReset(o *Partition, next int64) (applies bool, err error)
	// Align brings the stores behind st.Start() up to it as o is claimed:
	// it may move o's uncommitted position, and returns whether the owner
	// must commit the start before it delivers.
	Align(o *Partition, st Stored) (commitStart bool)
	// Reset deletes the group's stored offsets (Offsets.ResetOffsets).
	Reset() error
}

// Stored is what the stores hold for a partition when it is claimed.
type Stored struct {
	ZkNext    int64 // ZooKeeper's next offset; -1: none, or not read
	ZkVersion int32 // version of ZooKeeper's offset node; -1: none
	KafkaNext int64 // Kafka's next offset; -1: none, or not read
}

// Start is where consumption starts (-1: nothing stored, Offsets.Initial).
func (s Stored) Start() int64 {
	return StartOffset(s.ZkNext, s.KafkaNext)
}

// StartOffset picks the start of a partition from the offsets stored in
// ZooKeeper and in Kafka (-1 for a store that holds none, or is not used):
// the higher one. In dual mode ZooKeeper is written first, so Kafka is
// behind only when a commit to it failed or members not yet migrated
// committed to ZooKeeper alone; ZooKeeper is behind only when members
// already on Kafka-only storage committed. Either way the higher offset was
// committed last, by a member that held the claim: starting there loses
// nothing, and starting lower would deliver again what was processed.
func StartOffset(zookeeper, kafka int64) int64 {
	return max(zookeeper, kafka, -1)
}

// nothingStored is Stored before any store is read.
var nothingStored = Stored{ZkNext: -1, ZkVersion: -1, KafkaNext: -1}

// newStore returns the store cfg.Kind names. owned lists the tracked
// partitions (the Kafka store reads what Kafka holds for them).
func newStore(e *env, owned func() map[string][]int32) Store {
	zk := &zookeeperStore{env: e}
	kafka := &kafkaStore{env: e, owned: owned}
	switch e.cfg.Kind {
	case KindKafka:
		kafka.counts = true
		return kafka
	case KindDual:
		return &dualStore{zk: zk, kafka: kafka}
	}
	return zk
}

// NewStore returns the store cfg.Kind names on its own, outside a
// Committer (for a reset as the group joins).
func NewStore(cfg Config, deps Deps) Store {
	return newStore(&env{cfg: cfg, deps: deps}, nil)
}
