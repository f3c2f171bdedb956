package offsets

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// TestKafkaFence: a commit to Kafka waits while the instance is fenced off
// from ZooKeeper (reported, the offset stays pending), is made once the
// fence lifts, and is never made for a claim held by a session that is not
// the current one.
func TestKafkaFence(t *testing.T) {
	const session = 42
	var fenced atomic.Bool
	store := newFakeOffsetStore()
	om := New(Config{Kind: KindKafka}, Deps{Log: slog.New(slog.DiscardHandler), Kafka: store,
		Session: func() int64 { return session }, FencedOff: fenced.Load})

	tp := TopicPartition{"t", 0}
	o := om.adopt(tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i", SessionID: session}, 0, -1, nil)
	if !o.Mark(nil, 4) {
		t.Fatal("mark refused")
	}
	fenced.Store(true)
	if err := om.Commit(o); !errors.Is(err, errFencedOff) {
		t.Fatalf("commit while fenced off = %v, want errFencedOff", err)
	}
	if got, n := store.get(tp); got != -1 || n != 0 {
		t.Fatalf("Kafka holds %d after %d commits while fenced off", got, n)
	}
	if _, dirty := o.Tracker.Pending(); !dirty {
		t.Fatal("the offset is no longer pending after a deferred commit")
	}
	fenced.Store(false)
	if err := om.Commit(o); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.get(tp); got != 5 {
		t.Fatalf("Kafka holds %d once the fence lifted, want 5", got)
	}

	stale := om.adopt(TopicPartition{"t", 1}, &kazoo.PartitionClaim{Topic: "t", Partition: 1, InstanceID: "i", SessionID: session + 1}, 0, -1, nil)
	if !stale.Mark(nil, 2) {
		t.Fatal("mark refused")
	}
	if err := om.kafkaStoreOf().kafkaFence(stale); !errors.Is(err, kazoo.ErrClaimLost) {
		t.Fatalf("kafkaFence of another session's claim = %v, want ErrClaimLost", err)
	}
	if err := om.Commit(stale); err != nil {
		t.Fatalf("commit of another session's claim = %v, want nil (nothing committed, the loss is the claim watch's to report)", err)
	}
	if got, _ := store.get(TopicPartition{"t", 1}); got != -1 {
		t.Fatalf("Kafka holds %d for a claim of another session", got)
	}
}
