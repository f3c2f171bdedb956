package topics

// Source is where a consumer group's coordination loop reads the subscribed
// topics' partitions and their leaders. Its methods are safe for
// concurrent use.
type Source interface {
	// Partitions returns topic's partitions, sorted by ID, each with its
	// leader when the source reads leaders (-1 otherwise, and for a
	// partition without a leader). For a topic that does not exist it
	// returns a *MissingTopicError, and Changed fires when the topic
	// appears.
	Partitions(topic string) ([]Partition, error)

	// Changed receives a value when an answer of Partitions may have
	// changed since it was given. Wake-ups coalesce: one value may stand
	// for several changes.
	Changed() <-chan struct{}

	// Close stops the source's background work, if any. It does not
	// close the ZooKeeper connection or anything else passed in.
	Close()
}

// Partition is one partition of a topic: its ID and the broker ID of its
// leader (-1 if it has none, or when the source does not read leaders).
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
