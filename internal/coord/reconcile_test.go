package coord

import (
	"slices"
	"testing"

	"github.com/zkgroup/kafka/internal/assign"
)

func members(ids ...string) []assign.Member {
	var ms []assign.Member
	for _, id := range ids {
		ms = append(ms, assign.Member{ID: id, Sub: assign.Static("t")})
	}
	return ms
}

// TestReconcileStopsOnlyWhatMoves: membership changes stop exactly the
// partitions that move away, keep the workers of the others, and start
// workers for the gained ones, chained to a predecessor still stopping.
func TestReconcileStopsOnlyWhatMoves(t *testing.T) {
	fw := &fakeWorkers{}
	l := testLoop(t, "b", fw)
	ps := newPartitions()
	parts := map[string][]assign.Partition{"t": {{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}}}

	// Alone: b owns everything.
	l.reconcile(view{members: members("b"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Fatalf("alone: owns %v", got)
	}
	before := map[int32]*fakeWorker{}
	for tp, w := range ps.workers {
		before[tp.Partition] = w.(*fakeWorker)
	}

	// a joins (sorted first): b keeps 2 and 3, loses 0 and 1.
	l.reconcile(view{members: members("a", "b"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{2, 3}) {
		t.Fatalf("with a: owns %v", got)
	}
	for _, p := range []int32{2, 3} {
		if ps.workers[TopicPartition{"t", p}] != before[p] || before[p].stopped() {
			t.Errorf("partition %d was stopped or restarted although it stayed", p)
		}
	}
	for _, p := range []int32{0, 1} {
		if w := before[p]; !slices.Equal(w.stops, []bool{false}) {
			t.Errorf("partition %d moved away: stops %v, want one committing stop", p, w.stops)
		}
	}

	// a leaves again: 0 and 1 come back with new workers.
	l.reconcile(view{members: members("b"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Fatalf("after a left: owns %v", got)
	}
	if ps.workers[TopicPartition{"t", 0}] == Worker(before[0]) {
		t.Error("partition 0 came back on its stopped worker")
	}

	// A gained partition whose predecessor is still stopping waits for it.
	stuck := newFakeWorker(TopicPartition{"t", 4}, nil)
	ps.stopping[stuck.tp] = stuck
	parts["t"] = append(parts["t"], assign.Partition{ID: 4})
	l.reconcile(view{members: members("b"), partitions: parts}, ps)
	if w := ps.workers[stuck.tp].(*fakeWorker); w.prev != Worker(stuck) {
		t.Errorf("partition 4's worker waits for %v, want its predecessor still stopping", w.prev)
	}
	if _, ok := ps.stopping[stuck.tp]; ok {
		t.Error("the predecessor is still tracked: only its successor should be")
	}
	ps.stopAll(false)
}

// Owner nodes that ended workers may have left are swept once no worker
// here wants their partition; a worker started for such a partition
// meanwhile waits for the sweep, so the sweep cannot delete its claim.
func TestReconcileSweepsLeftOwnerNodes(t *testing.T) {
	fw := &fakeWorkers{}
	l := testLoop(t, "b", fw)
	ps := newPartitions()
	ps.leftover[TopicPartition{"t", 0}] = true
	ps.leftover[TopicPartition{"t", 1}] = true
	// Partition 0 went to a; partition 1 is ours.
	l.reconcile(view{members: members("a", "b"), partitions: map[string][]assign.Partition{"t": {{ID: 0}, {ID: 1}}}}, ps)

	if len(fw.swept) != 2 {
		t.Fatalf("%d sweeps started, want 2", len(fw.swept))
	}
	sweeper := map[int32]*fakeWorker{}
	for _, s := range fw.swept {
		sweeper[s.tp.Partition] = s
	}
	if ps.stopping[TopicPartition{"t", 0}] != Worker(sweeper[0]) {
		t.Error("partition 0's sweep is not tracked among the stopping workers")
	}
	w := ps.workers[TopicPartition{"t", 1}]
	if w == nil || w.(*fakeWorker).prev != Worker(sweeper[1]) {
		t.Error("the worker for partition 1 does not wait for its sweep")
	}
	if len(ps.leftover) != 0 {
		t.Errorf("leftover %v after the sweeps started, want none", ps.leftover)
	}

	// A worker that ended holding a node: swept at the next pass.
	ps.stopAll(false)
	ended := newFakeWorker(TopicPartition{"t", 0}, nil)
	ended.mayHoldNode = true
	ended.end()
	ps.stopping[ended.tp] = ended
	l.reconcile(view{members: members("a", "b"), partitions: map[string][]assign.Partition{"t": {{ID: 0}, {ID: 1}}}}, ps)
	if len(fw.swept) != 3 || fw.swept[2].tp != ended.tp {
		t.Errorf("a worker ended holding a node for partition 0: sweeps %d, want a third for it", len(fw.swept))
	}
	ps.stopAll(false)
}

// A reserved member's share is computed again, as everyone's is, when the
// membership changes while it is away. A partition the new share takes
// from a live member stays with that member until the absent one returns:
// it keeps flowing instead of waiting out the grace window unowned.
// Nothing is claimed for the absent member's share, and once it returns
// the partition moves to it.
func TestReconcileKeepsWhatAReservedShareTakes(t *testing.T) {
	fw := &fakeWorkers{}
	l := testLoop(t, "c", fw)
	ps := newPartitions()
	parts := map[string][]assign.Partition{"t": {{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}, {ID: 6}, {ID: 7}}}

	// Range by id over a, b, c, d: c consumes 4 and 5.
	l.reconcile(view{members: members("a", "b", "c", "d"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{4, 5}) {
		t.Fatalf("a, b, c, d: c owns %v, want [4 5]", got)
	}
	kept := map[int32]Worker{4: ps.workers[TopicPartition{"t", 4}], 5: ps.workers[TopicPartition{"t", 5}]}

	// b is away within its grace window, and d leaves for good: over a,
	// b and c, range hands b 3, 4 and 5, and c 6 and 7. c keeps 4 and 5
	// (b is not there to take them) and gains 6 and 7.
	l.reconcile(view{members: members("a", "c"), reserved: members("b"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{4, 5, 6, 7}) {
		t.Fatalf("b reserved, d gone: c owns %v, want [4 5 6 7]", got)
	}
	for p, w := range kept {
		if ps.workers[TopicPartition{"t", p}] != w || w.(*fakeWorker).stopped() {
			t.Errorf("partition %d was stopped although its reserved assignee is away", p)
		}
	}

	// A reserved share never starts a worker: 3, which c never had, stays
	// unclaimed here.
	if ps.workers[TopicPartition{"t", 3}] != nil {
		t.Error("c claimed partition 3 of b's reserved share")
	}

	// b returns: 4 and 5 move to it.
	l.reconcile(view{members: members("a", "b", "c"), partitions: parts}, ps)
	if got := owned(ps.workers); !slices.Equal(got, []int32{6, 7}) {
		t.Fatalf("b back: c owns %v, want [6 7]", got)
	}
	for p, w := range kept {
		if fwk := w.(*fakeWorker); !slices.Equal(fwk.stops, []bool{false}) {
			t.Errorf("partition %d after b returned: stops %v, want one committing stop", p, fwk.stops)
		}
	}
	ps.stopAll(false)
}
