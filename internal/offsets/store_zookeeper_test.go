package offsets

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// scriptedRegistry is a Registry whose fenced commits answer from a
// script, in turn, and fail the test once it runs out; every other call
// fails the test.
type scriptedRegistry struct {
	t       *testing.T
	answers []commitAnswer
	sent    []int64 // the offsets of the fenced commits, in order
}

// commitAnswer is one fenced commit's answer: the new version, or err.
type commitAnswer struct {
	version int32
	err     error
}

func (r *scriptedRegistry) CommitOffsetFenced(_ *kazoo.PartitionClaim, next int64, _ int32) (int32, error) {
	r.sent = append(r.sent, next)
	if len(r.answers) == 0 {
		r.t.Fatalf("unexpected fenced commit of %d", next)
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a.version, a.err
}

func (r *scriptedRegistry) FetchOffsetVersion(string, int32) (int64, int32, error) {
	r.t.Fatal("unexpected FetchOffsetVersion")
	return 0, 0, nil
}

func (r *scriptedRegistry) CommitOffset(string, int32, int64) error {
	r.t.Fatal("unexpected unfenced CommitOffset")
	return nil
}

func (r *scriptedRegistry) RewindOffsetFenced(*kazoo.PartitionClaim, int64, int32) error {
	r.t.Fatal("unexpected RewindOffsetFenced")
	return nil
}

func (r *scriptedRegistry) ResetOffsets() error {
	r.t.Fatal("unexpected ResetOffsets")
	return nil
}

// countingMetrics counts what the committer measures.
type countingMetrics struct{ commits, conflicts int }

func (m *countingMetrics) Committed(TopicPartition, time.Duration, int64) { m.commits++ }
func (m *countingMetrics) Conflict()                                      { m.conflicts++ }

// zookeeperFixture is a Committer over ZooKeeper storage and a scripted
// registry, tracking t/0 at 10 (offset node version 3) for a bareOwner.
type zookeeperFixture struct {
	reg     *scriptedRegistry
	metrics *countingMetrics
	owner   *bareOwner
	reports []error
	om      *Committer
	o       *Partition
}

func newZookeeperFixture(t *testing.T, answers ...commitAnswer) *zookeeperFixture {
	f := &zookeeperFixture{reg: &scriptedRegistry{t: t, answers: answers}, metrics: &countingMetrics{}, owner: &bareOwner{}}
	f.om = New(Config{Kind: KindZookeeper}, Deps{Log: slog.New(slog.DiscardHandler), Registry: f.reg, Metrics: f.metrics,
		Report: func(err error) { f.reports = append(f.reports, err) }})
	claim := &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}
	f.o = f.om.adopt(TopicPartition{"t", 0}, claim, 10, 3, f.owner)
	return f
}

// mark delivers and marks offset.
func (f *zookeeperFixture) mark(t *testing.T, offset int64) {
	t.Helper()
	f.o.Offer(offset)
	f.o.Delivered(offset)
	if !f.o.Mark(nil, offset) {
		t.Fatalf("mark of %d refused", offset)
	}
}

// A fenced commit that succeeds records the node's new version and the
// committed offset, and counts the commit.
func TestZookeeperStoreCommit(t *testing.T) {
	f := newZookeeperFixture(t, commitAnswer{version: 4})
	f.mark(t, 14)
	if err := f.om.Commit(f.o); err != nil {
		t.Fatal(err)
	}
	if f.o.version != 4 || f.o.Tracker.CommittedOffset() != 15 || f.metrics.commits != 1 {
		t.Errorf("after the commit: version %d, committed %d, %d commits counted; want 4, 15, 1",
			f.o.version, f.o.Tracker.CommittedOffset(), f.metrics.commits)
	}
	if err := f.om.Commit(f.o); err != nil || len(f.reg.sent) != 1 {
		t.Errorf("nothing marked since: %v, %d commits sent; want nil, 1", err, len(f.reg.sent))
	}
}

// A moved epoch marks the partition lost and tells its owner, and nothing
// is committed for it again.
func TestZookeeperStoreCommitClaimLost(t *testing.T) {
	f := newZookeeperFixture(t, commitAnswer{err: kazoo.ErrClaimLost})
	f.mark(t, 14)
	if err := f.om.Commit(f.o); !errors.Is(err, kazoo.ErrClaimLost) {
		t.Fatalf("commit = %v, want ErrClaimLost", err)
	}
	if !f.o.Lost() || !f.owner.lost {
		t.Fatalf("lost %v, owner told %v; want both", f.o.Lost(), f.owner.lost)
	}
	if err := f.om.Commit(f.o); err != nil || len(f.reg.sent) != 1 {
		t.Errorf("a lost partition committed again: %v, %d commits sent", err, len(f.reg.sent))
	}
}

// An offset changed underneath is adopted: the owner seeks there, pending
// marks are refused until it restarts, and the conflict is counted and
// reported once, as a *ConflictError.
func TestZookeeperStoreCommitConflict(t *testing.T) {
	f := newZookeeperFixture(t, commitAnswer{err: &kazoo.OffsetConflictError{Topic: "t", Partition: 0, Stored: 50, Version: 7}})
	f.mark(t, 14)
	err := f.om.Commit(f.o)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Stored != 50 || conflict.Pending != 15 || !errors.Is(err, kazoo.ErrOffsetConflict) {
		t.Fatalf("commit = %v, want a *ConflictError stored 50, pending 15", err)
	}
	if !f.o.Seeking() || len(f.owner.seeks) != 1 || f.owner.seeks[0] != 50 {
		t.Fatalf("seeking %v, owner told %v; want a seek to 50", f.o.Seeking(), f.owner.seeks)
	}
	if f.o.version != 7 || f.metrics.conflicts != 1 || len(f.reports) != 1 || !errors.As(f.reports[0], &conflict) {
		t.Errorf("version %d, %d conflicts counted, reports %v; want 7, 1, one *ConflictError", f.o.version, f.metrics.conflicts, f.reports)
	}
	if f.o.Mark(nil, 15) {
		t.Error("a mark accepted while the seek is pending")
	}
}

// A commit whose reply was lost is in doubt; when the next commit finds the
// node one version on holding that value, it is our own write: no seek,
// no report, and what was marked since is committed at once.
func TestZookeeperStoreCommitInDoubtFoundOurs(t *testing.T) {
	f := newZookeeperFixture(t,
		commitAnswer{err: errors.New("connection lost")},                      // applied, reply lost
		commitAnswer{err: &kazoo.OffsetConflictError{Stored: 15, Version: 4}}, // our 15 at version 3+1
		commitAnswer{version: 5})                                              // the marks since
	f.mark(t, 14)
	if err := f.om.Commit(f.o); err == nil {
		t.Fatal("a commit without an answer returned nil")
	}
	f.mark(t, 19)
	if err := f.om.Commit(f.o); err != nil {
		t.Fatalf("commit after the write in doubt: %v", err)
	}
	if f.o.Seeking() || len(f.owner.seeks) != 0 || len(f.reports) != 0 || f.metrics.conflicts != 0 {
		t.Errorf("our own write taken for a conflict: seeking %v, seeks %v, reports %v", f.o.Seeking(), f.owner.seeks, f.reports)
	}
	if want := []int64{15, 20, 20}; len(f.reg.sent) != 3 || f.reg.sent[1] != want[1] || f.reg.sent[2] != want[2] {
		t.Errorf("commits sent %v, want %v", f.reg.sent, want)
	}
	if f.o.version != 5 || f.o.Tracker.CommittedOffset() != 20 {
		t.Errorf("version %d, committed %d; want 5, 20", f.o.version, f.o.Tracker.CommittedOffset())
	}
}

// The Kind picks the store; dual is built from the other two.
func TestNewStoreByKind(t *testing.T) {
	for kind, want := range map[Kind]string{KindZookeeper: "*offsets.zookeeperStore", KindKafka: "*offsets.kafkaStore", KindDual: "*offsets.dualStore"} {
		got := NewStore(Config{Kind: kind}, Deps{})
		if name := fmt.Sprintf("%T", got); name != want {
			t.Errorf("%v: %s, want %s", kind, name, want)
		}
	}
}

// A dual claim starts at the higher offset, and the store behind is
// brought up to it: ZooKeeper by a start commit of a new position, Kafka
// by the catch-up every commit makes.
func TestDualStoreAlign(t *testing.T) {
	for _, c := range []struct {
		name        string
		zk, kafka   int64
		commitStart bool
		pending     bool // the start is pending (ZooKeeper behind)
	}{
		{"nothing stored", -1, -1, false, false},
		{"both equal", 7, 7, false, false},
		{"zookeeper behind", 5, 9, true, true},
		{"kafka behind", 9, 5, true, false},
		{"kafka holds none", 9, -1, true, false},
	} {
		om := newCommitter(KindDual, newFakeOffsetStore())
		st := Stored{ZkNext: c.zk, ZkVersion: -1, KafkaNext: c.kafka}
		o := om.Adopt(TopicPartition{"t", 0}, nil, st, nil)
		if got := om.Store().Align(o, st); got != c.commitStart {
			t.Errorf("%s: Align = %v, want %v", c.name, got, c.commitStart)
		}
		if next, dirty := o.Tracker.Pending(); dirty != c.pending || dirty && next != st.Start() {
			t.Errorf("%s: pending %d (%v), want the start %d pending %v", c.name, next, dirty, st.Start(), c.pending)
		}
	}
}
