package consumergroup

import (
	"log/slog"
	"testing"
	"time"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/testenv"
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
	workers := map[topicPartition]*partitionWorker{}
	stopping := map[topicPartition]*partitionWorker{}
	leftover := map[topicPartition]bool{{topic, 0}: true, {topic, 1}: true}
	// Partition 0 went to another member; partition 1 is ours again.
	v := view{
		members:    []assign.Member{{ID: "!other", Sub: assign.Static(topic)}, {ID: inst.ID, Sub: assign.Static(topic)}}, // "!other" sorts first: it gets 0
		partitions: map[string][]PartitionInfo{topic: {{ID: 0}, {ID: 1}}},
	}
	if assigned, _ := assign.Topics(conf.Assignment.Strategy, v.members, v.partitions); len(assigned[inst.ID][topic]) != 1 || assigned[inst.ID][topic][0].ID != 1 {
		t.Fatalf("assignment %v: the test wants partition 1 for %s", assigned, inst.ID)
	}
	cg.reconcile(v, workers, stopping, map[topicPartition]time.Time{}, leftover, make(chan *partitionWorker, 2))
	for p := int32(0); p < 2; p++ {
		tp := topicPartition{topic, p}
		sweeper := stopping[tp]
		if p == 1 {
			// Assigned here: the worker started for it waits for the sweep.
			w := workers[tp]
			if w == nil {
				t.Fatal("no worker for the partition assigned here")
			}
			defer func() { w.stop(true); <-w.done }()
			sweeper = w.prev
		}
		if sweeper == nil {
			t.Fatalf("no sweep started for partition %d, or its worker does not wait for it", p)
		}
		select {
		case <-sweeper.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the sweep did not end")
		}
		if o, err := kg.PartitionOwner(topic, p); err != nil || o != nil {
			t.Errorf("partition %d's owner node after the sweep: %v (%v), want none", p, o, err)
		}
	}
	if len(leftover) != 0 {
		t.Errorf("leftover %v after the sweeps started, want none", leftover)
	}
}
