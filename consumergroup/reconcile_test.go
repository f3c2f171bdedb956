package consumergroup

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/kazoo"
)

// blockingRegistry never grants a claim: TryClaim waits until the worker is
// stopped. It lets reconcile's bookkeeping be tested without ZooKeeper.
type blockingRegistry struct{}

func (blockingRegistry) TryClaim(ctx context.Context, _ string, _ int32) (*kazoo.PartitionClaim, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingRegistry) WatchOwner(ctx context.Context, _ string, _ int32) (string, <-chan kazoo.Event, error) {
	return "", nil, nil
}

func (blockingRegistry) Release(context.Context, *kazoo.PartitionClaim) error { return nil }

func owned(workers map[topicPartition]*partitionWorker) []int32 {
	var ps []int32
	for tp := range workers {
		ps = append(ps, tp.Partition)
	}
	slices.Sort(ps)
	return ps
}

// TestReconcileStopsOnlyWhatMoves: membership changes stop exactly the
// partitions that move away, keep the workers of the others, and start
// workers for the gained ones, chained to a predecessor still stopping.
func TestReconcileStopsOnlyWhatMoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := NewConfig()
		conf.Assignment.Strategy = StrategyRangeByID
		claimer, err := claim.New(blockingRegistry{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cg := &ConsumerGroup{
			config:   conf,
			log:      slog.New(slog.DiscardHandler),
			instance: (&kazoo.Kazoo{}).Consumergroup("g").Instance("b"),
			claimer:  claimer,
			errors:   make(chan error, 16),
		}
		parts := map[string][]PartitionInfo{"t": {{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}}}
		workers := map[topicPartition]*partitionWorker{}
		stopping := map[topicPartition]*partitionWorker{}
		cooldown := map[topicPartition]time.Time{}
		exited := make(chan *partitionWorker)

		// Alone: b owns everything.
		cg.reconcile(view{members: []assign.Member{{ID: "b", Sub: assign.Static("t")}}, partitions: parts}, workers, stopping, cooldown, map[topicPartition]bool{}, exited)
		if got := owned(workers); !slices.Equal(got, []int32{0, 1, 2, 3}) {
			t.Fatalf("alone: owns %v", got)
		}
		before := map[int32]*partitionWorker{}
		for tp, w := range workers {
			before[tp.Partition] = w
		}

		// a joins (sorted first): b keeps 2 and 3, loses 0 and 1.
		cg.reconcile(view{members: []assign.Member{{ID: "a", Sub: assign.Static("t")}, {ID: "b", Sub: assign.Static("t")}}, partitions: parts}, workers, stopping, cooldown, map[topicPartition]bool{}, exited)
		if got := owned(workers); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("with a: owns %v", got)
		}
		for _, p := range []int32{2, 3} {
			if workers[topicPartition{"t", p}] != before[p] {
				t.Errorf("partition %d was restarted although it stayed", p)
			}
		}
		for _, p := range []int32{0, 1} {
			w := before[p]
			synctest.Wait()
			select {
			case <-w.done:
			default:
				t.Errorf("partition %d moved away but its worker still runs", p)
			}
		}

		// a leaves again: 0 and 1 come back with new workers.
		cg.reconcile(view{members: []assign.Member{{ID: "b", Sub: assign.Static("t")}}, partitions: parts}, workers, stopping, cooldown, map[topicPartition]bool{}, exited)
		if got := owned(workers); !slices.Equal(got, []int32{0, 1, 2, 3}) {
			t.Fatalf("after a left: owns %v", got)
		}
		if workers[topicPartition{"t", 0}] == before[0] {
			t.Error("partition 0 came back on its stopped worker")
		}

		// Close: every worker stops.
		for _, w := range workers {
			w.stop(false)
			<-w.done
		}
	})
}
