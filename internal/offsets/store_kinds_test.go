package offsets

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// Pins of what each storage kind does differently, as the offset manager
// did before the move into this package (consumergroup's
// offset_manager.go, offsets_kafka.go, offset_storage.go): the resets, the
// rewind as a reset, and which commits the metrics count.

// callLog records calls in the order they were made.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(call string) {
	l.mu.Lock()
	l.calls = append(l.calls, call)
	l.mu.Unlock()
}

func (l *callLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// loggingRegistry is a Registry that logs its writes and answers fenced
// commits with the next version; reads fail the test.
type loggingRegistry struct {
	t       *testing.T
	log     *callLog
	version int32
}

func (r *loggingRegistry) FetchOffsetVersion(string, int32) (int64, int32, error) {
	r.t.Error("unexpected FetchOffsetVersion")
	return -1, -1, nil
}

func (r *loggingRegistry) CommitOffset(string, int32, int64) error {
	r.log.add("zk.commit")
	return nil
}

func (r *loggingRegistry) CommitOffsetFenced(*kazoo.PartitionClaim, int64, int32) (int32, error) {
	r.log.add("zk.commitFenced")
	r.version++
	return r.version, nil
}

func (r *loggingRegistry) RewindOffsetFenced(*kazoo.PartitionClaim, int64, int32) error {
	r.log.add("zk.rewind")
	return nil
}

func (r *loggingRegistry) ResetOffsets() error {
	r.log.add("zk.reset")
	return nil
}

// loggingKafka is a fakeOffsetStore whose reset is logged.
type loggingKafka struct {
	*fakeOffsetStore
	log *callLog
}

func (k loggingKafka) Reset() error {
	k.log.add("kafka.reset")
	return k.fakeOffsetStore.Reset()
}

// kindDeps returns Deps over a logging registry and Kafka store, with
// others as the group's other members.
func kindDeps(t *testing.T, log *callLog, others []string, m Metrics) Deps {
	return Deps{
		Log: slog.New(slog.DiscardHandler), Metrics: m,
		Registry: &loggingRegistry{t: t, log: log, version: 3},
		Kafka:    loggingKafka{newFakeOffsetStore(), log},
		Session:  func() int64 { return 0 }, FencedOff: func() bool { return false },
		OtherMembers: func() ([]string, error) {
			log.add("members")
			return others, nil
		},
	}
}

// Offsets.ResetOffsets: with ZooKeeper alone the reset is fenced and holds
// while members run, so it neither lists them nor touches Kafka; with Kafka
// in the storage it runs only while no other member is registered, Kafka
// first, then ZooKeeper, and lists the members again afterwards.
func TestStoreResetByKind(t *testing.T) {
	for _, c := range []struct {
		kind    Kind
		others  []string
		want    []string
		refused bool
	}{
		{KindZookeeper, []string{"other"}, []string{"zk.reset"}, false},
		{KindKafka, nil, []string{"members", "kafka.reset", "zk.reset", "members"}, false},
		{KindDual, nil, []string{"members", "kafka.reset", "zk.reset", "members"}, false},
		{KindKafka, []string{"other"}, []string{"members"}, true},
		{KindDual, []string{"other"}, []string{"members"}, true},
	} {
		log := &callLog{}
		err := NewStore(Config{Kind: c.kind, Group: "g"}, kindDeps(t, log, c.others, nil)).Reset()
		if c.refused != errors.Is(err, ErrResetWhileMembersRun) || (!c.refused && err != nil) {
			t.Errorf("%v with members %v: Reset = %v, refused want %v", c.kind, c.others, err, c.refused)
		}
		if got := log.got(); !slices.Equal(got, c.want) {
			t.Errorf("%v with members %v: calls %v, want %v", c.kind, c.others, got, c.want)
		}
	}
}

// A rewind below the stored offset is stored as a reset (ending the claim)
// only with ZooKeeper storage and a claim: Kafka knows no epochs, so with
// kafka or dual storage it does not apply and writes nothing.
func TestRewindAsResetAppliesOnlyWithZookeeper(t *testing.T) {
	claim := &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}
	for _, c := range []struct {
		kind    Kind
		claim   *kazoo.PartitionClaim
		applies bool
	}{
		{KindZookeeper, claim, true},
		{KindZookeeper, nil, false},
		{KindKafka, claim, false},
		{KindDual, claim, false},
	} {
		log := &callLog{}
		om := New(Config{Kind: c.kind}, kindDeps(t, log, nil, nil))
		owner := &bareOwner{}
		o := om.adopt(TopicPartition{"t", 0}, c.claim, 100, 3, owner)
		applies, err := om.RewindAsReset(o, 0)
		if applies != c.applies || err != nil {
			t.Errorf("%v (claim %v): RewindAsReset = %v, %v; want %v, nil", c.kind, c.claim != nil, applies, err, c.applies)
		}
		wantCalls := []string(nil)
		if c.applies {
			wantCalls = []string{"zk.rewind"}
		}
		if got := log.got(); !slices.Equal(got, wantCalls) {
			t.Errorf("%v (claim %v): calls %v, want %v", c.kind, c.claim != nil, got, wantCalls)
		}
		if o.Lost() != c.applies || owner.lost != c.applies {
			t.Errorf("%v (claim %v): lost %v, owner told %v; want %v (the rewind ends the claim)", c.kind, c.claim != nil, o.Lost(), owner.lost, c.applies)
		}
	}
}

// The metrics count the group's commits: ZooKeeper's with zookeeper and
// dual storage (the Kafka commit that follows in dual is not counted
// again), Kafka's with kafka storage.
func TestCommitsCountedOncePerKind(t *testing.T) {
	claim := &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}
	for _, c := range []struct {
		kind  Kind
		calls []string
	}{
		{KindZookeeper, []string{"zk.commitFenced"}},
		{KindKafka, nil},
		{KindDual, []string{"zk.commitFenced"}},
	} {
		log := &callLog{}
		m := &countingMetrics{}
		deps := kindDeps(t, log, nil, m)
		om := New(Config{Kind: c.kind}, deps)
		o := om.adopt(TopicPartition{"t", 0}, claim, 10, 3, &bareOwner{})
		o.Offer(14)
		o.Delivered(14)
		if !o.Mark(nil, 14) {
			t.Fatalf("%v: mark refused", c.kind)
		}
		if err := om.Commit(o); err != nil {
			t.Fatalf("%v: commit: %v", c.kind, err)
		}
		if m.commits != 1 {
			t.Errorf("%v: %d commits counted, want 1", c.kind, m.commits)
		}
		if got := log.got(); !slices.Equal(got, c.calls) {
			t.Errorf("%v: ZooKeeper calls %v, want %v", c.kind, got, c.calls)
		}
		kafka, _ := deps.Kafka.(loggingKafka).get(TopicPartition{"t", 0})
		if wantKafka := c.kind != KindZookeeper; (kafka == 15) != wantKafka {
			t.Errorf("%v: Kafka holds %d; committed to Kafka %v, want %v", c.kind, kafka, kafka == 15, wantKafka)
		}
	}
}

// shimRegistry is a loggingRegistry whose offset nodes hold stored.
type shimRegistry struct {
	loggingRegistry
	stored map[TopicPartition]int64
}

func (r *shimRegistry) FetchOffsetVersion(topic string, partition int32) (int64, int32, error) {
	if n, ok := r.stored[TopicPartition{topic, partition}]; ok {
		return n, 0, nil
	}
	return -1, -1, nil
}

func (r *shimRegistry) CommitOffset(topic string, partition int32, next int64) error {
	r.log.add("zk.commit")
	r.stored[TopicPartition{topic, partition}] = next
	return nil
}

// Upstream's OffsetManager calls, as NewZookeeperOffsetManager serves them:
// InitializePartition reads the stored offset and tracks the partition
// unfenced; MarkAsProcessed moves the mark only forward; Flush and
// FinalizePartition commit plainly (no epoch); FinalizePartition stops
// tracking; Close counts what is still tracked.
func TestLegacyOffsetManagerCalls(t *testing.T) {
	log := &callLog{}
	reg := &shimRegistry{loggingRegistry{t: t, log: log}, map[TopicPartition]int64{{"t", 0}: 7}}
	om := New(Config{Kind: KindZookeeper}, Deps{Log: slog.New(slog.DiscardHandler), Registry: reg})
	om.Start()
	if next, err := om.InitializePartition("t", 0); next != 7 || err != nil {
		t.Fatalf("InitializePartition(t, 0) = %d, %v; want 7, nil", next, err)
	}
	if next, err := om.InitializePartition("t", 1); next != -1 || err != nil {
		t.Fatalf("InitializePartition(t, 1) = %d, %v; want -1, nil", next, err)
	}
	if !om.MarkAsProcessed("t", 0, 9) || om.MarkAsProcessed("t", 0, 8) || om.MarkAsProcessed("t", 2, 1) {
		t.Fatal("MarkAsProcessed: a forward mark refused, or a backward mark or an untracked partition's accepted")
	}
	if err := om.Flush(); err != nil {
		t.Fatal(err)
	}
	if reg.stored[TopicPartition{"t", 0}] != 10 {
		t.Fatalf("after Flush ZooKeeper holds %d, want 10", reg.stored[TopicPartition{"t", 0}])
	}
	if !om.MarkAsProcessed("t", 1, 3) {
		t.Fatal("mark refused")
	}
	if err := om.FinalizePartition("t", 1, 3, time.Second); err != nil {
		t.Fatal(err)
	}
	if reg.stored[TopicPartition{"t", 1}] != 4 || om.Lookup(TopicPartition{"t", 1}) != nil {
		t.Fatalf("after FinalizePartition ZooKeeper holds %d (want 4), still tracked %v", reg.stored[TopicPartition{"t", 1}], om.Lookup(TopicPartition{"t", 1}) != nil)
	}
	if got := log.got(); !slices.Equal(got, []string{"zk.commit", "zk.commit"}) {
		t.Errorf("calls %v, want two plain commits", got)
	}
	if left, err := om.Close(); left != 1 || err != nil {
		t.Errorf("Close = %d, %v; want 1 partition still tracked, nil", left, err)
	}
	if left, err := om.Close(); left != 0 || err != nil {
		t.Errorf("second Close = %d, %v; want 0, nil", left, err)
	}
}
