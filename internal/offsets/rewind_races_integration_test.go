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
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	group, topic := testenv.UniqueName("rewind-g"), testenv.UniqueName("rewind")
	kg := kz.Consumergroup(group)
	if err := kg.Create(); err != nil {
		t.Fatal(err)
	}
	inst := kg.NewInstance()
	pc, err := inst.Claim(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	version, err := inst.CommitOffsetFenced(pc, 100, -1)
	if err != nil {
		t.Fatal(err)
	}
	om := New(Config{}, Deps{Log: slog.New(slog.DiscardHandler), Registry: kazooRegistry{kg, inst}})
	tp := TopicPartition{topic, 0}
	o := om.adopt(tp, pc, 100, version, &bareOwner{})

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
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	group, topic := testenv.UniqueName("rewind-g"), testenv.UniqueName("rewind")
	kg := kz.Consumergroup(group)
	if err := kg.Create(); err != nil {
		t.Fatal(err)
	}
	inst := kg.NewInstance()
	pc, err := inst.Claim(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	version, err := inst.CommitOffsetFenced(pc, 100, -1)
	if err != nil {
		t.Fatal(err)
	}
	om := New(Config{}, Deps{Log: slog.New(slog.DiscardHandler), Registry: kazooRegistry{kg, inst}})
	tp := TopicPartition{topic, 0}
	o := om.adopt(tp, pc, 100, version, &bareOwner{})
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
