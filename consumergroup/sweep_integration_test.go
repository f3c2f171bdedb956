package consumergroup

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// An owner node of this instance's session that a worker could not delete
// (its release and its fallback failed for good) is swept by the group's
// loop once no worker here wants the partition; a worker started for the
// partition meanwhile waits for the sweep, so the sweep cannot delete that
// worker's own claim. Without the sweep the node stays while the session
// lives.
func TestIntegrationSweepDeletesLeftOwnerNode(t *testing.T) {
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	group, topic := testenv.UniqueName("sweep-g"), testenv.UniqueName("sweep")
	kg := kz.Consumergroup(group)
	if err := kg.Create(); err != nil {
		t.Fatal(err)
	}
	inst := kg.NewInstance()
	for p := int32(0); p < 2; p++ { // two nodes left behind by workers gone
		if _, err := inst.Claim(topic, p); err != nil {
			t.Fatal(err)
		}
	}
	conf := NewConfig()
	conf.Assignment.Strategy = StrategyRangeByID
	claimer, err := claim.New(blockingRegistry{}, nil) // workers never claim here
	if err != nil {
		t.Fatal(err)
	}
	cg := &ConsumerGroup{
		config: conf, log: slog.New(slog.DiscardHandler), kazoo: kz, group: kg, instance: inst,
		claimer: claimer, errors: make(chan error, 16), gate: fence.NewGate(),
		stopper: make(chan struct{}), closeExpired: make(chan struct{}), sweepWake: make(chan struct{}, 1),
	}
	// What the coordination loop does for a node left behind (its
	// bookkeeping is tested in package coord): partition 0 went to another
	// member, so it is only swept; partition 1 is ours again, so a worker
	// started for it waits for the sweep.
	workers := groupWorkers{cg}
	sweeps := []coord.Worker{workers.SweepOwnerNode(coord.TopicPartition{Topic: topic, Partition: 0})}
	sweeps = append(sweeps, workers.SweepOwnerNode(coord.TopicPartition{Topic: topic, Partition: 1}))
	w := workers.Start(coord.TopicPartition{Topic: topic, Partition: 1}, sweeps[1], make(chan coord.Worker, 1)).(*worker.Worker)
	defer func() { w.Stop(true); <-w.Done() }()
	if w.Predecessor() != sweeps[1] {
		t.Fatal("the worker started for partition 1 does not wait for its sweep")
	}
	for p := int32(0); p < 2; p++ {
		sweeper := sweeps[p]
		select {
		case <-sweeper.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the sweep did not end")
		}
		if o, err := kg.PartitionOwner(topic, p); err != nil || o != nil {
			t.Errorf("partition %d's owner node after the sweep: %v (%v), want none", p, o, err)
		}
	}
}

// blockingRegistry never grants a claim: TryClaim waits until the worker is
// stopped.
type blockingRegistry struct{}

func (blockingRegistry) TryClaim(ctx context.Context, _ string, _ int32) (*kazoo.PartitionClaim, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingRegistry) WatchOwner(ctx context.Context, _ string, _ int32) (string, <-chan kazoo.Event, error) {
	return "", nil, nil
}

func (blockingRegistry) Release(context.Context, *kazoo.PartitionClaim) error { return nil }
