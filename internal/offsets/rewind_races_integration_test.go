package offsets

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// open() finds the stored offset (100) past the log's end and takes
// it back to Offsets.Initial (0) with rewindAsReset. Meanwhile an operator
// wrote the offset node by hand (50) and the commit loop adopted it: the
// conflict set o.version to the operator's version, set seeking and raised
// a seek to 50 ("it never overwrites the new value"). The rewind must write
// nothing then: with the adopted version its transaction would pass and
// overwrite the operator's 50 with 0.
func TestIntegrationRewindLeavesAnAdoptedOffset(t *testing.T) {
	r := newRewindFixture(t)
	kg, topic, om, o := r.kg, r.topic, r.om, r.o

	// The operator writes the offset node by hand.
	if err := kg.CommitOffset(topic, 0, 50); err != nil {
		t.Fatal(err)
	}
	// The commit loop commits a mark and finds the conflict: it adopts 50.
	o.Offer(119)
	if !o.Mark(nil, 119) {
		t.Fatal("mark refused")
	}
	_ = om.Commit(o)
	if !o.Seeking() {
		t.Fatal("the conflict was not adopted (no seek pending)")
	}
	// The worker, in open(), takes the out-of-range 100 back to 0.
	applies, rerr := om.RewindAsReset(o, 0)
	if !applies || !errors.Is(rerr, ErrSeekPending) {
		t.Errorf("rewindAsReset = %v, %v with a seek pending; want true, ErrSeekPending", applies, rerr)
	}
	stored, err := kg.FetchOffset(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if stored != 50 {
		t.Errorf("stored offset %d after the rewind, want the operator's 50, which the group had adopted (seek pending): the rewind overwrote it", stored)
	}
}

// A commit whose reply was lost (in doubt) and that was applied
// leaves the offset node one version on, holding our value; the next
// commit recognises it (InDoubt.Ours) and carries on with no seek and no
// report. The rewind must do the same: its SetData at the old version is
// refused, and that is our own write, not an *OffsetConflictError to seek
// to.
func TestIntegrationRewindAfterOurCommitInDoubt(t *testing.T) {
	r := newRewindFixture(t)
	kg, inst, pc, version, topic, om, o := r.kg, r.inst, r.pc, r.version, r.topic, r.om, r.o
	// A commit of 110 went out; its reply was lost, but it applied.
	if _, err := inst.CommitOffsetFenced(pc, 110, version); err != nil {
		t.Fatal(err)
	}
	o.inDoubt.Add(110, version)

	applies, rerr := om.RewindAsReset(o, 0)
	if !applies || rerr != nil || o.Seeking() {
		t.Errorf("rewindAsReset = %v, %v (seek pending %v) after our own applied commit in doubt; want it recognised "+
			"as ours (as a commit does with InDoubt.Ours) and the rewind made", applies, rerr, o.Seeking())
	}
	if stored, err := kg.FetchOffset(topic, 0); err != nil || stored != 0 {
		t.Errorf("stored offset %d (%v) after the rewind, want 0", stored, err)
	}
}

// rewindFixture is a partition claimed on the local ZooKeeper whose offset
// node holds 100, tracked by a committer over ZooKeeper.
type rewindFixture struct {
	kg      *kazoo.Consumergroup
	inst    *kazoo.ConsumergroupInstance
	pc      *kazoo.PartitionClaim
	version int32 // of the offset node
	topic   string
	om      *Committer
	o       *Partition
}

func newRewindFixture(t *testing.T) rewindFixture {
	t.Helper()
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	r := rewindFixture{topic: testenv.UniqueName("rewind")}
	r.kg = kz.Consumergroup(testenv.UniqueName("rewind-g"))
	if err := r.kg.Create(); err != nil {
		t.Fatal(err)
	}
	r.inst = r.kg.NewInstance()
	if r.pc, err = r.inst.Claim(r.topic, 0); err != nil {
		t.Fatal(err)
	}
	if r.version, err = r.inst.CommitOffsetFenced(r.pc, 100, -1); err != nil {
		t.Fatal(err)
	}
	r.om = New(Config{}, Deps{Log: slog.New(slog.DiscardHandler), Registry: KazooRegistry(r.kg, func() *kazoo.ConsumergroupInstance { return r.inst })})
	r.o = r.om.adopt(TopicPartition{r.topic, 0}, r.pc, 100, r.version, &bareOwner{})
	return r
}
