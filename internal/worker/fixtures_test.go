package worker

import (
	"log/slog"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// newTestWorker returns a worker for t/0 that has not started, with the
// deps given; the ones a test leaves unset do nothing (errors are
// dropped), except Offsets: a committer without its commit loop, and
// Gate, Claimer, Registry, Session and Fetch: none.
func newTestWorker(deps Deps) *Worker {
	return newTestWorkerFor(deps, TopicPartition{Topic: "t", Partition: 0})
}

// newTestWorkerFor is newTestWorker for tp.
func newTestWorkerFor(deps Deps, tp TopicPartition) *Worker {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Offsets == nil {
		deps.Offsets = offsets.New(offsets.Config{}, offsets.Deps{})
	}
	if deps.Metrics == nil {
		deps.Metrics = noMetrics{}
	}
	if deps.Report == nil {
		deps.Report = func(error) {}
	}
	if deps.ReportPartition == nil {
		deps.ReportPartition = func(string, int32, error) {}
	}
	if deps.WakeSweep == nil {
		deps.WakeSweep = func() {}
	}
	return New(Config{}, deps, tp)
}

// adoptAt starts tracking w's partition for w at next, fenced by c, no
// offset node stored.
func adoptAt(w *Worker, c *kazoo.PartitionClaim, next int64) *offsets.Partition {
	st := offsets.Stored{ZkNext: next, ZkVersion: -1, KafkaNext: -1}
	return w.deps.Offsets.Adopt(offsets.TopicPartition(w.tp), c, st, w)
}

// testClaim is a claim of t/0 by instance i under session.
func testClaim(session int64) *kazoo.PartitionClaim {
	return &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i", SessionID: session}
}

type noMetrics struct{}

func (noMetrics) Claimed(time.Duration) {}
func (noMetrics) Ended(TopicPartition)  {}
