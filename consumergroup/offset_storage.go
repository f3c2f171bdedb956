package consumergroup

import "github.com/zkgroup/kafka/internal/offsets"

// OffsetStorage names where a group's committed offsets live: the value of
// Offsets.Storage.
type OffsetStorage string

const (
	// OffsetStorageZookeeper stores offsets in ZooKeeper only, under
	// /consumers/<group>/offsets, as Kafka's original high-level consumer
	// did. The default.
	OffsetStorageZookeeper OffsetStorage = "zookeeper"

	// OffsetStorageKafka stores offsets in Kafka only, as the group's
	// committed offsets (the __consumer_offsets topic), where Kafka's own
	// tools and broker-coordinated consumers read them. ZooKeeper still
	// coordinates the group: registrations, claims, epochs and fencing.
	OffsetStorageKafka OffsetStorage = "kafka"

	// OffsetStorageDual commits every offset to ZooKeeper (fenced by the
	// claim) and then to Kafka, and starts each claimed partition at the
	// higher of the two stored offsets: the migration step between the other
	// two, as Kafka's own dual.commit.enabled was.
	OffsetStorageDual OffsetStorage = "dual"

	// DefaultOffsetStorage is Offsets.Storage's default.
	DefaultOffsetStorage = OffsetStorageZookeeper
)

func (s OffsetStorage) valid() bool {
	return s == OffsetStorageZookeeper || s == OffsetStorageKafka || s == OffsetStorageDual
}

// usesKafka reports whether offsets are read from and committed to Kafka.
func (s OffsetStorage) usesKafka() bool {
	return s == OffsetStorageKafka || s == OffsetStorageDual
}

// kind is the offsets package's name of s (an empty one, which Validate
// refuses, acts as the default inside the package).
func (s OffsetStorage) kind() offsets.Kind {
	switch s {
	case OffsetStorageKafka:
		return offsets.KindKafka
	case OffsetStorageDual:
		return offsets.KindDual
	}
	return offsets.KindZookeeper
}
