package worker

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// TopicPartition names one partition of one topic.
type TopicPartition = coord.TopicPartition

// Config is what a worker takes from the group's configuration.
type Config struct {
	// InstanceID is this instance's id in the group: the owner nodes'
	// value.
	InstanceID string
	// ProcessingTimeout bounds the drain (Offsets.ProcessingTimeout).
	ProcessingTimeout time.Duration
	// RetryCooldown is the wait between retries of a failed read or open
	// (Claim.RetryCooldown).
	RetryCooldown time.Duration
	// InitialInterval and MaxInterval bound the backoff of a start commit
	// and of deleting an owner node (Claim.InitialInterval, MaxInterval).
	InitialInterval time.Duration
	MaxInterval     time.Duration
	// Initial is where a partition without a stored offset starts
	// (Offsets.Initial: sarama.OffsetOldest or sarama.OffsetNewest).
	Initial int64
}

// Deps is what a worker works with, each behind the interface of what it
// uses.
type Deps struct {
	Claimer  Claimer
	Registry Registry
	Session  Session
	Offsets  Offsets
	Fetch    Fetch
	Gate     Gate // nil: no fence (tests)
	// Sink returns where the worker hands its messages, asked once the
	// partition is claimed.
	Sink func() Sink
	// InitialOffset resolves Config.Initial for a partition to a real
	// offset, asked of its leader; it takes no context, so the worker
	// stops waiting for it when Stopping is closed.
	InitialOffset func(topic string, partition int32) (int64, error)
	// Stopping is closed when Close begins.
	Stopping <-chan struct{}
	Log      *slog.Logger
	Metrics  Metrics
	// Report hands an error to the application as it is; ReportPartition
	// names the partition it concerns.
	Report          func(err error)
	ReportPartition func(topic string, partition int32, err error)
	// Closing is closed when Close stops waiting for ZooKeeper: the
	// session, and every owner node of ours, ends next.
	Closing <-chan struct{}
	// DrainsCut is closed when Close's caller stops waiting for marks
	// (CloseContext's context ended): every drain ends at once, as at its
	// deadline, and the worker commits what was marked and releases.
	// nil: never.
	DrainsCut <-chan struct{}
	// HandingOut, when not nil, runs on each message once, as it is handed
	// out (the consumer's interceptors: fetch.Engine.HandingOut).
	HandingOut func(m *sarama.ConsumerMessage)
	// WakeSweep wakes the manage loop after a worker ended that may have
	// left an owner node (see MayHoldNode).
	WakeSweep func()
	// WatchSlots, when not nil, bounds the claim watches being armed at
	// once by the instance's workers: each arming holds a slot for its
	// reads (see claim_watch.go). nil: no bound.
	WatchSlots chan struct{}
	// BeforeRelease, when not nil, runs in the worker's goroutine as it
	// enters releasing: a test's hook.
	BeforeRelease func(w *Worker)
}

// Claimer claims a partition and releases the claim (claim.Claimer).
type Claimer interface {
	Keep(ctx context.Context, topic string, partition int32, onFailure func(*claim.Error)) (*kazoo.PartitionClaim, error)
	Release(ctx context.Context, pc *kazoo.PartitionClaim) error
}

// Registry is what the worker asks ZooKeeper beside the claimer
// (kazoo.ConsumergroupInstance).
type Registry interface {
	WatchClaimNodes(pc *kazoo.PartitionClaim) (kazoo.ClaimWatches, error)
	ReleaseAfterLoss(pc *kazoo.PartitionClaim) error
}

// Session is the instance's ZooKeeper session (kazoo.Kazoo).
type Session interface {
	Session() (kazoo.Session, <-chan struct{})
	SessionID() int64
	SessionTimeout() time.Duration
}

// Offsets tracks and commits the partition's offsets (offsets.Committer).
type Offsets interface {
	Adopt(tp offsets.TopicPartition, claim *kazoo.PartitionClaim, st offsets.Stored, owner offsets.Owner) *offsets.Partition
	Drop(o *offsets.Partition)
	Commit(o *offsets.Partition) error
	FinalCommit(o *offsets.Partition) error
	RewindAsReset(o *offsets.Partition, next int64) (applies bool, err error)
	Store() offsets.Store
}

// Fetch opens the partition's fetch sources (fetch.Engine).
type Fetch interface {
	Partition(ctx context.Context, topic string, partition int32, mark *atomic.Int64, outOfRange fetch.OutOfRangeFunc) *fetch.Partition
	// ExpectOpen says the partition is about to open (it is being
	// claimed); the worker calls opened once it is open, or ends.
	ExpectOpen() (opened func())
}

// Gate is the delivery gate the session fence pauses (fence.Gate).
type Gate interface {
	Listen(paused func()) (stop func())
	Paused() bool
	SendTo(interrupt <-chan struct{}, out fence.Outlet, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool)
}

// Metrics records what a worker measures.
type Metrics interface {
	// Claimed counts a claim that took wait from the worker's start.
	Claimed(wait time.Duration)
	// Ended drops what was measured for the partition once its worker,
	// which held a claim, ended.
	Ended(tp TopicPartition)
}
