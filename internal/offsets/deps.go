package offsets

import (
	"context"
	"log/slog"
	"time"

	"github.com/zkgroup/kafka/internal/coalesce"
	"github.com/zkgroup/kafka/kazoo"
)

// Registry is the ZooKeeper side the zookeeper store writes through.
type Registry interface {
	// FetchOffsetVersion returns a partition's stored next offset and the
	// version of its offset node (-1, -1: none).
	FetchOffsetVersion(topic string, partition int32) (int64, int32, error)
	// CommitOffset stores next unfenced (partitions tracked without a claim).
	CommitOffset(topic string, partition int32, next int64) error
	// CommitOffsetFenced stores next fenced by c's epoch if the offset node
	// is still at version, and returns its new version.
	CommitOffsetFenced(c *kazoo.PartitionClaim, next int64, version int32) (int32, error)
	// RewindOffsetFenced stores next as a reset does, bumping c's epoch.
	RewindOffsetFenced(c *kazoo.PartitionClaim, next int64, version int32) error
	// ResetOffsets deletes the group's offsets, bumping every epoch.
	ResetOffsets() error
}

// KazooRegistry is the Registry of group's offset nodes in ZooKeeper,
// fenced writes made as the instance that instance returns when called.
// Concurrent fenced commits are batched: those that arrive while one is
// in flight go together in the next call of the instance's
// CommitOffsetsFenced, each with its own fences and its own answer
// (docs/coordination.md#offset-commits-in-batches). instance is called
// once per batch.
func KazooRegistry(group *kazoo.Consumergroup, instance func() *kazoo.ConsumergroupInstance) Registry {
	r := &kazooRegistry{group: group, instance: instance}
	r.commits = coalesce.New(kazoo.MaxBatch, func(reqs []kazoo.OffsetCommitRequest) []kazoo.OffsetCommitResult {
		return r.instance().CommitOffsetsFenced(reqs)
	})
	return r
}

type kazooRegistry struct {
	group    *kazoo.Consumergroup
	instance func() *kazoo.ConsumergroupInstance
	commits  *coalesce.Coalescer[kazoo.OffsetCommitRequest, kazoo.OffsetCommitResult]
}

func (r *kazooRegistry) FetchOffsetVersion(topic string, partition int32) (int64, int32, error) {
	return r.group.FetchOffsetVersion(topic, partition)
}

func (r *kazooRegistry) CommitOffset(topic string, partition int32, next int64) error {
	return r.group.CommitOffset(topic, partition, next)
}

// CommitOffsetFenced waits for its batch's answer, as a single commit
// waited for its reply: Registry's calls take no ctx.
func (r *kazooRegistry) CommitOffsetFenced(c *kazoo.PartitionClaim, next int64, version int32) (int32, error) {
	res, _ := r.commits.Do(context.Background(), kazoo.OffsetCommitRequest{Claim: c, Offset: next, ExpectedVersion: version})
	return res.NewVersion, res.Err
}

func (r *kazooRegistry) RewindOffsetFenced(c *kazoo.PartitionClaim, next int64, version int32) error {
	return r.instance().RewindOffsetFenced(c, next, version)
}

func (r *kazooRegistry) ResetOffsets() error { return r.group.ResetOffsets() }

// Metrics receives what the committer measures.
type Metrics interface {
	// Committed counts a commit of tp that took latency; lag is the
	// partition's lag after it, -1 when unknown.
	Committed(tp TopicPartition, latency time.Duration, lag int64)
	// Conflict counts an offset found changed underneath.
	Conflict()
}

// Deps is what a Committer is given: the stores' clients and the group's
// session, fence, members and error channel, each as a narrow piece.
type Deps struct {
	Log      *slog.Logger // nil: discarded
	Metrics  Metrics      // nil: none
	Report   func(error)  // errors for the application; nil: dropped
	Registry Registry     // ZooKeeper, with KindZookeeper or KindDual (and for resets)
	Kafka    GroupOffsets // Kafka's group offsets, with KindKafka or KindDual
	// Session returns the current ZooKeeper session's id: a claim of an
	// older session is lost.
	Session func() int64
	// FencedOff reports whether the session fence holds delivery paused.
	FencedOff func() bool
	// OtherMembers lists the group's registered members other than this
	// instance (resets of Kafka's offsets refuse to run beside them).
	OtherMembers func() ([]string, error)
	// Closing, when closed, ends every wait for Kafka (ErrGroupClosing).
	Closing <-chan struct{}
}

// env is what the stores and the committer share.
type env struct {
	cfg  Config
	deps Deps
}

func (e *env) log() *slog.Logger {
	if e.deps.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.deps.Log
}

func (e *env) report(err error) {
	if err != nil && e.deps.Report != nil {
		e.deps.Report(err)
	}
}

func (e *env) committed(tp TopicPartition, latency time.Duration, lag int64) {
	if e.deps.Metrics != nil {
		e.deps.Metrics.Committed(tp, latency, lag)
	}
}

func (e *env) conflict() {
	if e.deps.Metrics != nil {
		e.deps.Metrics.Conflict()
	}
}
