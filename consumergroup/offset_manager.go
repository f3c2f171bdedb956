package consumergroup

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
)

// OffsetManager is upstream's interface to the group's offset store.
type OffsetManager interface {
	// InitializePartition starts tracking a partition and returns its stored
	// next offset (-1 if none).
	//
	// Deprecated: a partition started this way is committed unfenced, so
	// an instance that lost it can still move its offset. Let the group
	// claim its partitions (JoinConsumerGroup, NewConsumerGroup): their
	// commits are fenced by the claim's epoch.
	InitializePartition(topic string, partition int32) (int64, error)

	// MarkAsProcessed marks offset of the partition as processed; it returns
	// whether the mark was accepted (marks only move forward).
	MarkAsProcessed(topic string, partition int32, offset int64) bool

	// Flush commits the marked offsets of every tracked partition now.
	Flush() error

	// FinalizePartition waits up to timeout for lastOffset to be marked,
	// commits, and stops tracking the partition.
	FinalizePartition(topic string, partition int32, lastOffset int64, timeout time.Duration) error

	// Close stops the commit loop after a last commit; it returns
	// UncleanClose if partitions were still tracked.
	Close() error
}

// OffsetManagerConfig configures the offset manager.
type OffsetManagerConfig struct {
	// CommitInterval is the period of the commit loop; 0 disables it (commits
	// then happen on Flush and FinalizePartition only). Default 10 s.
	CommitInterval time.Duration
	// VerboseLogging logs every commit at debug level. Default false.
	VerboseLogging bool
}

// NewOffsetManagerConfig returns an OffsetManagerConfig with the defaults.
func NewOffsetManagerConfig() *OffsetManagerConfig {
	return &OffsetManagerConfig{CommitInterval: DefaultCommitInterval}
}

// NewZookeeperOffsetManager returns the offset manager cg uses: offsets in
// ZooKeeper as plain decimals of the next offset, committed every
// CommitInterval. Partitions claimed by the group's partition consumers are
// committed fenced by their claim's epoch; partitions started through
// InitializePartition use plain (unfenced) commits, as upstream did.
func NewZookeeperOffsetManager(cg *ConsumerGroup, config *OffsetManagerConfig) OffsetManager {
	om := newOffsetManager(cg, config)
	om.Start()
	return om
}

// offsetManager is the committer of internal/offsets behind upstream's
// OffsetManager: its Close reports partitions still tracked as UncleanClose.
type offsetManager struct {
	*offsets.Committer
}

// newOffsetManager returns cg's committer, its commit loop not started.
// The stores are the ones Offsets.Storage names (ZooKeeper alone for a
// cg without a config).
func newOffsetManager(cg *ConsumerGroup, config *OffsetManagerConfig) *offsetManager {
	if config == nil {
		config = NewOffsetManagerConfig()
	}
	if cg == nil {
		return &offsetManager{offsets.New(offsets.Config{CommitInterval: config.CommitInterval, VerboseLogging: config.VerboseLogging}, offsets.Deps{})}
	}
	cfg := cg.offsetsConfig()
	cfg.CommitInterval, cfg.VerboseLogging = config.CommitInterval, config.VerboseLogging
	return &offsetManager{offsets.New(cfg, cg.offsetsDeps())}
}

// Close implements OffsetManager.
func (om *offsetManager) Close() error {
	left, err := om.Committer.Close()
	if left > 0 {
		err = errors.Join(fmt.Errorf("%w: %d partitions still tracked", UncleanClose, left), err)
	}
	return err
}
