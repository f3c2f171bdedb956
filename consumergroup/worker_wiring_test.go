package consumergroup

import (
	"testing"

	"github.com/zkgroup/kafka/internal/worker"
)

// The claim watch may wait for a claim's first hand-out only when every
// commit carries the epoch check (offsets in ZooKeeper alone); with
// Kafka's offsets in use, the watch is what fences their commits, and is
// armed at once.
func TestClaimWatchDelayOnlyWithZooKeeperOffsets(t *testing.T) {
	for _, c := range []struct {
		storage OffsetStorage
		want    int64
	}{
		{OffsetStorageZookeeper, int64(worker.DefaultClaimWatchDelay)},
		{OffsetStorageKafka, 0},
		{OffsetStorageDual, 0},
	} {
		cfg := NewConfig()
		cfg.Offsets.Storage = c.storage
		if got := (&ConsumerGroup{config: cfg}).workerConfig().ClaimWatchDelay; int64(got) != c.want {
			t.Errorf("Offsets.Storage %q: ClaimWatchDelay %v, want %v", c.storage, got, c.want)
		}
	}
}
