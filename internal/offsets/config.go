package offsets

import "time"

// Kind names where the group's committed offsets live.
type Kind int

const (
	// KindZookeeper stores offsets in ZooKeeper only, fenced by the claims.
	KindZookeeper Kind = iota
	// KindKafka stores offsets as Kafka's group offsets only.
	KindKafka
	// KindDual commits to ZooKeeper, then to Kafka, and starts each claim at
	// the higher of the two.
	KindDual
)

// Config configures a Committer.
type Config struct {
	// Kind is where offsets are stored. Default KindZookeeper.
	Kind Kind
	// CommitInterval is the period of the commit loop; 0 disables it
	// (commits then happen on Flush and the final commits only).
	CommitInterval time.Duration
	// VerboseLogging logs every commit at debug level.
	VerboseLogging bool
	// Concurrency bounds the commits in flight at once; 0: 128.
	Concurrency int
	// KafkaCommitBudget is how long after a commit to Kafka began an
	// attempt of it may still start (see kafkaStore.commit); 0: kazoo's
	// default session timeout.
	KafkaCommitBudget time.Duration
	// Group is the group's name, for messages.
	Group string
}

// String returns the storage's name, as Offsets.Storage spells it.
func (k Kind) String() string {
	switch k {
	case KindKafka:
		return "kafka"
	case KindDual:
		return "dual"
	}
	return "zookeeper"
}
