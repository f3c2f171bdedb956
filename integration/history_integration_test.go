package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationHistoryRecorder proves the history recorder's wiring on the
// real stack with a clean history: instance 1 consumes a topic alone, then
// instance 2 joins (a clean rebalance) and both consume more. The checker
// must find nothing lost, no offset backwards, no overlap, the two
// partitions that moved as the only handoffs, no duplicate, and the group
// converged on the default assignment of the two within the session timeout
// plus a second of the join. Afterwards an unfenced write lowers two
// committed offsets, one of them announced as a reset: the recorder must see
// both, and the checker must excuse the announced one only.
func TestIntegrationHistoryRecorder(t *testing.T) {
	testenv.Integration(t)
	const partitions = int32(4)
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("hist")
	topics := []string{topic}
	cfg := testConfig()
	within := cfg.Zookeeper.Timeout + time.Second

	h := newHistory(t, group, topic, partitions) // before anyone commits
	l := newLedger()
	h.attach(l)

	produced := produce(t, topic, 200)
	a := join(t, group, topics, cfg)
	doneA := consume(t, 1, a, l)
	t.Cleanup(func() { closeGroup(t, a); <-doneA })
	waitFor(t, 30*time.Second, "instance 1 to deliver everything", func() bool { return l.missing(topic, produced) == 0 })
	idA := h.instances()
	if len(idA) != 1 {
		t.Fatalf("registered: %v, want instance 1 only", idA)
	}

	h.fault("instance 2 joins")
	b := join(t, group, topics, testConfig())
	doneB := consume(t, 2, b, l)
	t.Cleanup(func() { closeGroup(t, b); <-doneB })
	h.faultEnd()
	var ids []string
	waitFor(t, 10*time.Second, "instance 2 to register", func() bool { ids = h.instances(); return len(ids) == 2 })

	// Converged on the new assignment before producing again, so that the
	// partitions that moved are delivered by instance 2.
	first := h.checkWith(expectation{live: ids, assigned: true, within: within})
	if first.failed(invConvergence) {
		first.log(t)
		t.Fatalf("no convergence after the join")
	}
	for p, n := range produce(t, topic, 200) {
		produced[p] += n
	}
	rep := h.checkWith(expectation{produced: produced, live: ids, assigned: true, within: within, drain: 30 * time.Second})
	rep.log(t)
	rep.assertClean(t)
	if rep.missing != 0 || rep.produced != 400 {
		t.Errorf("%d of %d offsets missing, want 0 of 400", rep.missing, rep.produced)
	}
	if rep.perInstance[1] == 0 || rep.perInstance[2] == 0 {
		t.Errorf("deliveries per instance %v: want both to deliver", rep.perInstance)
	}
	if rep.handoffs != int(partitions)/2 {
		t.Errorf("%d handoffs, want %d (the partitions that moved to instance 2)", rep.handoffs, partitions/2)
	}
	if rep.dups != 0 {
		t.Errorf("%d duplicates (%v), want none in a clean rebalance", rep.dups, rep.dupsBy)
	}
	if rep.offsetWrites < int(partitions) || rep.deletions != 0 || rep.recreated != 0 {
		t.Errorf("offset states seen %d, deletions %d, re-created %d: want at least one commit per partition, nothing deleted",
			rep.offsetWrites, rep.deletions, rep.recreated)
	}

	// The recorder sees decreases, and the checker excuses a reset only.
	closeGroup(t, a)
	closeGroup(t, b)
	<-doneA
	<-doneB
	state := newGroupState(t, group)
	h.reset(1, 3)
	for p, v := range map[int32]int64{0: 5, 1: 3} {
		if err := state.cg.CommitOffset(topic, p, v); err != nil {
			t.Fatalf("lower the offset of %d: %v", p, err)
		}
	}
	var after *historyReport
	waitFor(t, 10*time.Second, "the recorder to see both writes", func() bool {
		after = h.checkWith(expectation{})
		return after.offsetWrites >= rep.offsetWrites+2
	})
	if len(after.violations[invBackwards]) != 1 || after.resetsUsed != 1 {
		t.Errorf("after lowering partitions 0 (no reset) and 1 (reset): backwards %q, excused %d; want partition 0 only, 1 excused",
			after.violations[invBackwards], after.resetsUsed)
	}
}
