package topics

// Source is where a consumer group's coordination loop reads the subscribed
// topics' partitions and their leaders. Its methods are safe for
// concurrent use.
type Source interface {
	// Partitions returns topic's partitions, sorted by ID, each with its
	// leader when the source reads leaders and want asks for it (-1 when
	// the source does not read leaders or the partition has none;
	// LeaderNotRead when want did not ask for it and the source would
	// have had to read it on its own). For a topic that does not exist
	// it returns a *MissingTopicError, and Changed fires when the topic
	// appears.
	Partitions(topic string, want Leaders) ([]Partition, error)

	// Changed receives a value when an answer of Partitions may have
	// changed since it was given. Wake-ups coalesce: one value may stand
	// for several changes.
	Changed() <-chan struct{}

	// Close stops the source's background work, if any. It does not
	// close the ZooKeeper connection or anything else passed in.
	Close()
}

// Leaders says which partitions' leaders a caller of Partitions needs.
// Reading a leader from ZooKeeper is one read per partition, which a
// group's first view paid for every partition (docs/performance.md,
// "Scale"), although only range-by-leader divides partitions by leader.
// The zero value asks for none.
type Leaders struct {
	// All asks for every partition's leader: the assignment orders the
	// partitions by leader (range-by-leader, sticky's fallback in a mixed
	// fleet).
	All bool
	// Of, when All is false and Of is not nil, names the partitions whose
	// leaders are wanted all the same: those the instance consumes, whose
	// leader moves its fetches follow (WithLeaderMoves).
	Of func(partition int32) bool
}

// wants reports whether w asks for the leader of partition id.
func (w Leaders) wants(id int32) bool {
	return w.All || w.Of != nil && w.Of(id)
}

// LeaderNotRead is the Leader of a partition whose leader a ZooKeeperSource
// was not asked for (see Leaders): unknown, as opposed to -1, none.
const LeaderNotRead int32 = -2

// Partition is one partition of a topic: its ID and the broker ID of its
// leader (-1 if it has none, or when the source does not read leaders;
// LeaderNotRead when it was not asked for).
type Partition struct {
	ID     int32
	Leader int32
}

// MissingTopicError says a subscribed topic does not exist (yet). Err is
// the source's own error, which it unwraps to: kazoo.ErrNoNode from
// ZooKeeper, sarama.ErrUnknownTopicOrPartition (or the broker's error for
// a topic still being created) from Kafka.
type MissingTopicError struct{ Err error }

func (e *MissingTopicError) Error() string { return e.Err.Error() }
func (e *MissingTopicError) Unwrap() error { return e.Err }
