package offsets

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

func TestStartOffset(t *testing.T) {
	for _, c := range []struct {
		name            string
		zk, kafka, want int64
	}{
		{"neither stored", -1, -1, -1},
		{"zookeeper only", 42, -1, 42},
		{"kafka only", -1, 42, 42},
		{"zookeeper ahead", 100, 40, 100},
		{"kafka ahead", 40, 100, 100},
		{"equal", 7, 7, 7},
		{"zero on one side", 0, -1, 0},
		{"zero against zero", 0, 0, 0},
	} {
		if got := StartOffset(c.zk, c.kafka); got != c.want {
			t.Errorf("%s: StartOffset(%d, %d) = %d, want %d", c.name, c.zk, c.kafka, got, c.want)
		}
		st := Stored{ZkNext: c.zk, ZkVersion: -1, KafkaNext: c.kafka}
		if got := st.Start(); got != c.want {
			t.Errorf("%s: Start() = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestKafkaStateDue(t *testing.T) {
	var k kafkaState
	k.next.Store(-1)
	now := time.Now()
	if k.due(-1, now) {
		t.Error("nothing to store is never due")
	}
	if !k.due(10, now) {
		t.Error("an offset Kafka does not hold is due")
	}
	k.next.Store(10)
	if !k.due(10, now) {
		t.Error("an offset read from Kafka, never written by us, is due (its age is unknown)")
	}
	k.at.Store(now.UnixNano())
	if k.due(10, now.Add(kafkaRefresh-time.Second)) {
		t.Error("an offset written less than kafkaRefresh ago is not due")
	}
	if !k.due(10, now.Add(kafkaRefresh)) {
		t.Error("an offset written kafkaRefresh ago is due again")
	}
	if !k.due(11, now) {
		t.Error("a moved offset is due")
	}
}

// With kafka storage a mark is committed to Kafka, a failed commit stays
// pending and is made by the next round, and nothing is sent again while
// the offset has not moved.
func TestKafkaStorageCommit(t *testing.T) {
	store := newFakeOffsetStore()
	om := kafkaOnly(store)
	tp := TopicPartition{"t", 0}
	o := om.adopt(tp, nil, 5, -1, nil)
	o.kafka.next.Store(5)
	o.kafka.at.Store(time.Now().UnixNano())
	if om.hasWork(o) {
		t.Fatal("work without a mark")
	}
	if !o.Mark(nil, 9) {
		t.Fatal("mark refused")
	}
	store.fail = errors.New("coordinator gone")
	if err := om.Commit(o); err == nil {
		t.Fatal("a failed commit to Kafka returned nil")
	}
	if next, dirty := o.Tracker.Pending(); !dirty || next != 10 {
		t.Fatalf("after a failed commit: pending %d dirty %v, want 10 true", next, dirty)
	}
	store.fail = nil
	if err := om.Commit(o); err != nil {
		t.Fatal(err)
	}
	if got, n := store.get(tp); got != 10 || n != 1 {
		t.Fatalf("Kafka holds %d after %d commits, want 10 after 1", got, n)
	}
	if om.hasWork(o) {
		t.Fatal("work left after the commit")
	}
	if err := om.Commit(o); err != nil {
		t.Fatal(err)
	}
	if _, n := store.get(tp); n != 1 {
		t.Fatalf("%d commits; an unchanged offset was sent again", n)
	}
}

// A partition whose claim was seen to end commits nothing to Kafka.
func TestKafkaStorageLostClaimCommitsNothing(t *testing.T) {
	store := newFakeOffsetStore()
	om := kafkaOnly(store)
	tp := TopicPartition{"t", 0}
	o := om.adopt(tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}, 0, -1, nil)
	if !o.Mark(nil, 3) {
		t.Fatal("mark refused")
	}
	o.SetLost()
	if err := om.kafkaStoreOf().kafkaFence(o); !errors.Is(err, kazoo.ErrClaimLost) {
		t.Fatalf("kafkaFence of a lost claim = %v, want ErrClaimLost", err)
	}
	o.commitMu.Lock()
	err := om.kafkaStoreOf().commitKafka(o, 4, true) // as if the loss came in mid-commit
	o.commitMu.Unlock()
	if err != nil {
		t.Fatalf("a lost claim's commit reported %v; the claim watch reports the loss", err)
	}
	if got, n := store.get(tp); got != -1 || n != 0 {
		t.Fatalf("Kafka holds %d after %d commits; a lost claim committed", got, n)
	}
}
