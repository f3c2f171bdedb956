package consumergroup

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

func TestOffsetStorageDefault(t *testing.T) {
	if got := NewConfig().Offsets.Storage; got != OffsetStorageZookeeper {
		t.Fatalf("Offsets.Storage defaults to %q, want %q", got, OffsetStorageZookeeper)
	}
}

func TestOffsetStorageValidate(t *testing.T) {
	for _, s := range []OffsetStorage{OffsetStorageZookeeper, OffsetStorageKafka, OffsetStorageDual} {
		c := NewConfig()
		c.Offsets.Storage = s
		if err := c.Validate(); err != nil {
			t.Errorf("Offsets.Storage %q refused: %v", s, err)
		}
	}
	for _, s := range []OffsetStorage{"", "Kafka", "zk", "both", " kafka"} {
		c := NewConfig()
		c.Offsets.Storage = s
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Offsets.Storage" || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Offsets.Storage %q: got %v, want a *ConfigError naming Offsets.Storage", s, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", string(s))) {
			t.Errorf("Offsets.Storage %q: the error does not quote the value: %v", s, err)
		}
	}
}

func TestOffsetStorageStores(t *testing.T) {
	for _, c := range []struct {
		s         OffsetStorage
		zk, kafka bool
	}{
		{OffsetStorageZookeeper, true, false},
		{OffsetStorageKafka, false, true},
		{OffsetStorageDual, true, true},
	} {
		if c.s.usesZookeeper() != c.zk || c.s.usesKafka() != c.kafka {
			t.Errorf("%q: zookeeper %v kafka %v, want %v %v", c.s, c.s.usesZookeeper(), c.s.usesKafka(), c.zk, c.kafka)
		}
	}
}

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
		if got := startOffset(c.zk, c.kafka); got != c.want {
			t.Errorf("%s: startOffset(%d, %d) = %d, want %d", c.name, c.zk, c.kafka, got, c.want)
		}
		st := storedOffsets{zkNext: c.zk, zkVersion: -1, kafkaNext: c.kafka}
		if got := st.start(); got != c.want {
			t.Errorf("%s: start() = %d, want %d", c.name, got, c.want)
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

// fakeOffsetStore is a groupOffsetStore in memory; fail makes commits fail.
type fakeOffsetStore struct {
	mu      sync.Mutex
	offsets map[topicPartition]int64
	commits int
	fail    error
}

func (f *fakeOffsetStore) fetch(topic string, partition int32) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.offsets[topicPartition{topic, partition}]; ok {
		return n, nil
	}
	return -1, nil
}

func (f *fakeOffsetStore) commit(topic string, partition int32, next int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.commits++
	f.offsets[topicPartition{topic, partition}] = next
	return nil
}

func (f *fakeOffsetStore) reset() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.offsets)
	return nil
}

func (f *fakeOffsetStore) get(tp topicPartition) (int64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.offsets[tp]
	if !ok {
		n = -1
	}
	return n, f.commits
}

func kafkaOnlyManager(store groupOffsetStore) *zookeeperOffsetManager {
	cg := &ConsumerGroup{log: slog.New(slog.DiscardHandler), kafkaOffsets: store}
	return &zookeeperOffsetManager{cg: cg, storage: OffsetStorageKafka, parts: make(map[topicPartition]*ownedOffsets)}
}

// With kafka storage a mark is committed to Kafka, a failed commit stays
// pending and is made by the next round, and nothing is sent again while
// the offset has not moved.
func TestKafkaStorageCommit(t *testing.T) {
	store := &fakeOffsetStore{offsets: map[topicPartition]int64{}}
	om := kafkaOnlyManager(store)
	tp := topicPartition{"t", 0}
	o := om.adopt(tp, nil, 5, -1, nil)
	o.kafka.next.Store(5)
	o.kafka.at.Store(time.Now().UnixNano())
	if om.hasWork(o) {
		t.Fatal("work without a mark")
	}
	if !o.mark(nil, 9) {
		t.Fatal("mark refused")
	}
	store.fail = errors.New("coordinator gone")
	if err := om.commit(o); err == nil {
		t.Fatal("a failed commit to Kafka returned nil")
	}
	if next, dirty := o.tracker.Pending(); !dirty || next != 10 {
		t.Fatalf("after a failed commit: pending %d dirty %v, want 10 true", next, dirty)
	}
	store.fail = nil
	if err := om.commit(o); err != nil {
		t.Fatal(err)
	}
	if got, n := store.get(tp); got != 10 || n != 1 {
		t.Fatalf("Kafka holds %d after %d commits, want 10 after 1", got, n)
	}
	if om.hasWork(o) {
		t.Fatal("work left after the commit")
	}
	if err := om.commit(o); err != nil {
		t.Fatal(err)
	}
	if _, n := store.get(tp); n != 1 {
		t.Fatalf("%d commits; an unchanged offset was sent again", n)
	}
}

// A partition whose claim was seen to end commits nothing to Kafka.
func TestKafkaStorageLostClaimCommitsNothing(t *testing.T) {
	store := &fakeOffsetStore{offsets: map[topicPartition]int64{}}
	om := kafkaOnlyManager(store)
	tp := topicPartition{"t", 0}
	o := om.adopt(tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}, 0, -1, nil)
	if !o.mark(nil, 3) {
		t.Fatal("mark refused")
	}
	o.lost.Store(true)
	if err := om.kafkaFence(o); !errors.Is(err, kazoo.ErrClaimLost) {
		t.Fatalf("kafkaFence of a lost claim = %v, want ErrClaimLost", err)
	}
	o.commitMu.Lock()
	err := om.commitKafka(o, 4, true) // as if the loss came in mid-commit
	o.commitMu.Unlock()
	if err != nil {
		t.Fatalf("a lost claim's commit reported %v; the claim watch reports the loss", err)
	}
	if got, n := store.get(tp); got != -1 || n != 0 {
		t.Fatalf("Kafka holds %d after %d commits; a lost claim committed", got, n)
	}
}
