package consumergroup

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationKafkaFence: a commit to Kafka waits while the instance is
// fenced off from ZooKeeper (reported, the offset stays pending), is made
// once the fence lifts, and is never made for a claim held by a session
// that is not the current one. The kazoo session only serves the claim's
// session check, hence the ZooKeeper of the local stack.
func TestIntegrationKafkaFence(t *testing.T) {
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	store := &fakeOffsetStore{offsets: map[topicPartition]int64{}}
	om := kafkaOnlyManager(store)
	om.cg.kazoo, om.cg.gate = kz, fence.NewGate()
	om.cg.log = slog.New(slog.DiscardHandler)

	tp := topicPartition{"t", 0}
	o := om.adopt(tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i", SessionID: kz.SessionID()}, 0, -1, nil)
	if !o.mark(nil, 4) {
		t.Fatal("mark refused")
	}
	om.cg.gate.Set(true)
	if err := om.commit(o); !errors.Is(err, errFencedOff) {
		t.Fatalf("commit while fenced off = %v, want errFencedOff", err)
	}
	if got, n := store.get(tp); got != -1 || n != 0 {
		t.Fatalf("Kafka holds %d after %d commits while fenced off", got, n)
	}
	if _, dirty := o.tracker.Pending(); !dirty {
		t.Fatal("the offset is no longer pending after a deferred commit")
	}
	om.cg.gate.Set(false)
	if err := om.commit(o); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.get(tp); got != 5 {
		t.Fatalf("Kafka holds %d once the fence lifted, want 5", got)
	}

	stale := om.adopt(topicPartition{"t", 1}, &kazoo.PartitionClaim{Topic: "t", Partition: 1, InstanceID: "i", SessionID: kz.SessionID() + 1}, 0, -1, nil)
	if !stale.mark(nil, 2) {
		t.Fatal("mark refused")
	}
	if err := om.kafkaFence(stale); !errors.Is(err, kazoo.ErrClaimLost) {
		t.Fatalf("kafkaFence of another session's claim = %v, want ErrClaimLost", err)
	}
	if err := om.commit(stale); err != nil {
		t.Fatalf("commit of another session's claim = %v, want nil (nothing committed, the loss is the claim watch's to report)", err)
	}
	if got, _ := store.get(topicPartition{"t", 1}); got != -1 {
		t.Fatalf("Kafka holds %d for a claim of another session", got)
	}
}
