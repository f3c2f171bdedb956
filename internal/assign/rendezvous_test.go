package assign

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestRendezvousGolden pins the function itself: instances of different
// versions must compute the same result, so any change here needs a new
// strategy name. The weights were checked against an independent
// implementation of the definition in docs/assignment.md (Python).
func TestRendezvousGolden(t *testing.T) {
	if got := weight(instanceKey("orders", "a"), 0); got != 0x98eb3f5416ea404c {
		t.Errorf("weight(orders, a, 0) = %#x", got)
	}
	if got := weight(instanceKey("", ""), 7); got != 0x9e5eb8c9d76d6c89 {
		t.Errorf("weight(\"\", \"\", 7) = %#x", got)
	}
	var parts []Partition
	for i := range 10 {
		parts = append(parts, p(int32(i), int32(i%3)))
	}
	got := idMap(Rendezvous("orders", []string{"c", "a", "b"}, parts))
	want := map[string][]int32{"a": {2, 4, 7}, "b": {3, 8, 9}, "c": {0, 1, 5, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestRendezvousEdges(t *testing.T) {
	if got := Rendezvous("t", nil, []Partition{p(0, 1)}); len(got) != 0 {
		t.Errorf("no instances: %v", got)
	}
	if got := Rendezvous("t", []string{"a"}, nil); len(got) != 0 {
		t.Errorf("no partitions: %v", got)
	}
	// Repeated IDs: instances count once, a partition is assigned once,
	// with its lowest leader.
	got := Rendezvous("t", []string{"b", "a", "b"}, []Partition{p(0, 2), p(1, 1), p(0, 1)})
	n := 0
	for id, ps := range got {
		for _, x := range ps {
			n++
			if x.ID == 0 && x.Leader != 1 {
				t.Errorf("%s got %v, want the entry with leader 1", id, x)
			}
		}
	}
	if n != 2 || len(got["a"]) != 1 || len(got["b"]) != 1 {
		t.Errorf("got %v, want one partition each", got)
	}
	// More instances than partitions: one each at most.
	got = Rendezvous("t", []string{"a", "b", "c", "d", "e"}, []Partition{p(0, 1), p(1, 1)})
	if len(got) != 2 {
		t.Errorf("got %v, want two instances with one partition each", got)
	}
}

// TestRendezvousProperties: for random inputs, every partition is assigned
// exactly once to a listed instance, no instance gets more than
// ceil(P/N), shares are sorted by ID, the input is left as it was, and the
// result does not depend on the order of the input.
func TestRendezvousProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for range 500 {
		inst, parts := randomInput(r, 1+r.IntN(12), r.IntN(60), 3)
		instCopy, partsCopy := slices.Clone(inst), slices.Clone(parts)
		topic := fmt.Sprintf("t%d", r.IntN(3))
		got := Rendezvous(topic, inst, parts)
		if !slices.Equal(inst, instCopy) || !slices.Equal(parts, partsCopy) {
			t.Fatal("Rendezvous must not modify its arguments")
		}
		checkOnceEach(t, inst, parts, got)
		// As range: P/N each, P%N one more.
		n := len(slices.Compact(slices.Sorted(slices.Values(inst))))
		extra := 0
		for _, id := range inst {
			if len(got[id]) == len(parts)/n+1 {
				extra++
			} else if len(got[id]) != len(parts)/n {
				t.Fatalf("%s has %d partitions; %d over %d is %d each, some one more", id, len(got[id]), len(parts), n, len(parts)/n)
			}
		}
		if extra != len(parts)%n {
			t.Fatalf("%d instances have one more, want %d%%%d = %d", extra, len(parts), n, len(parts)%n)
		}
		for id, ps := range got {
			if !slices.IsSortedFunc(ps, func(a, b Partition) int { return int(a.ID - b.ID) }) {
				t.Fatalf("%s's share %v is not sorted", id, ids(ps))
			}
		}
		r.Shuffle(len(inst), func(i, j int) { inst[i], inst[j] = inst[j], inst[i] })
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		if again := Rendezvous(topic, inst, parts); !reflect.DeepEqual(again, got) {
			t.Fatal("result depends on input order")
		}
	}
}

// checkOnceEach checks that every partition is assigned exactly once, to
// one of inst, with no empty share.
func checkOnceEach(t *testing.T, inst []string, parts []Partition, got map[string][]Partition) {
	t.Helper()
	seen := map[int32]string{}
	for owner, ps := range got {
		if !slices.Contains(inst, owner) {
			t.Fatalf("unknown owner %q", owner)
		}
		if len(ps) == 0 {
			t.Fatalf("%q has an empty entry", owner)
		}
		for _, x := range ps {
			if prev, dup := seen[x.ID]; dup {
				t.Fatalf("partition %d assigned to %q and %q", x.ID, prev, owner)
			}
			seen[x.ID] = owner
		}
	}
	if len(seen) != len(parts) {
		t.Fatalf("%d of %d partitions assigned", len(seen), len(parts))
	}
}

// members returns n instance IDs like kazoo-go's, drawn from r.
func members(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("web-%d:%08x-%04x", i, r.Uint32(), r.Uint32()&0xffff)
	}
	return out
}

// partitionRange returns partitions 0..n-1, leaders 1..3.
func partitionRange(n int) []Partition {
	out := make([]Partition, n)
	for i := range out {
		out[i] = p(int32(i), int32(1+i%3))
	}
	return out
}

// owners maps each partition ID to its instance.
func owners(a map[string][]Partition) map[int32]string {
	out := map[int32]string{}
	for id, ps := range a {
		for _, x := range ps {
			out[x.ID] = id
		}
	}
	return out
}

// movement compares two assignments: how many partitions changed owner, and
// how many of those neither went to joiner nor came from leaver.
func movement(before, after map[string][]Partition, joiner, leaver string) (moved, others int) {
	b, a := owners(before), owners(after)
	for id, was := range b {
		if now := a[id]; now != was {
			moved++
			if now != joiner && was != leaver {
				others++
			}
		}
	}
	return moved, others
}

// TestRendezvousUnboundedMovesOnlyWhatMust: without the bound on the load
// (capacity P), rendezvous hashing moves exactly the partitions that must
// move: a join only partitions to the joiner, a leave only the leaver's.
// The bounded function differs from this only where a partition's choice
// is full (TestRendezvousMovement).
func TestRendezvousUnboundedMovesOnlyWhatMust(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 21))
	parts := partitionRange(256)
	assign := func(inst []string) map[string][]Partition {
		sorted := slices.Sorted(slices.Values(inst))
		owner := matchByWeight("orders", sorted, parts, loadBound{len(parts), 0})
		out := map[string][]Partition{}
		for j, i := range owner {
			out[sorted[i]] = append(out[sorted[i]], parts[j])
		}
		return out
	}
	for range 20 {
		inst := members(r, 2+r.IntN(10))
		n := len(inst) - 1
		before, after := assign(inst[:n]), assign(inst)
		if moved, others := movement(before, after, inst[n], ""); others != 0 || moved != len(after[inst[n]]) {
			t.Fatalf("join: %d moved, %d of them not to the joiner", moved, others)
		}
		if moved, others := movement(after, before, "", inst[n]); others != 0 || moved != len(after[inst[n]]) {
			t.Fatalf("leave: %d moved, %d of them not the leaver's", moved, others)
		}
	}
}

// TestRendezvousMovement: with the bound, at 1,024 partitions and 32
// instances (exactly 32 each), a join or a leave moves at most three
// members' shares (the joiner's or the leaver's, and partitions that fall
// to another choice as the bound changes; 200 draws gave at most 64 and
// 65), and a third of what range moves at most. The figures are in
// docs/assignment.md (BenchmarkMovement).
func TestRendezvousMovement(t *testing.T) {
	const nParts, nInst = 1024, 32
	const share = nParts / nInst
	parts := partitionRange(nParts)
	r := rand.New(rand.NewPCG(34, 55))
	for range 5 {
		inst := members(r, nInst+1)
		base := Rendezvous("orders", inst[:nInst], parts)
		for id, ps := range base {
			if len(ps) != share {
				t.Fatalf("%s has %d partitions; 1024/32 is exactly 32 each", id, len(ps))
			}
		}

		joined := Rendezvous("orders", inst, parts)
		moved, _ := movement(base, joined, inst[nInst], "")
		if got := len(joined[inst[nInst]]); got < nParts/(nInst+1) {
			t.Errorf("join: the joiner got %d, want at least %d", got, nParts/(nInst+1))
		}
		if moved > 3*share {
			t.Errorf("join: %d moved, more than three shares (%d)", moved, 3*share)
		}
		if rangeMoved := rangeMovement(t, inst[:nInst], inst, parts); moved*3 > rangeMoved {
			t.Errorf("join: sticky moved %d, range %d", moved, rangeMoved)
		}

		leaver := inst[r.IntN(nInst)]
		rest := slices.DeleteFunc(slices.Clone(inst[:nInst]), func(s string) bool { return s == leaver })
		left := Rendezvous("orders", rest, parts)
		moved, others := movement(base, left, "", leaver)
		if moved-others != share {
			t.Errorf("leave: %d of the leaver's %d moved", moved-others, share)
		}
		if moved > 3*share {
			t.Errorf("leave: %d moved, more than three shares (%d)", moved, 3*share)
		}
		if rangeMoved := rangeMovement(t, inst[:nInst], rest, parts); moved*3 > rangeMoved {
			t.Errorf("leave: sticky moved %d, range %d", moved, rangeMoved)
		}
	}
}

// rangeMovement is how many partitions RangeByID moves from instances
// before to after.
func rangeMovement(t *testing.T, before, after []string, parts []Partition) int {
	t.Helper()
	a, err := Assign(RangeByID, before, parts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Assign(RangeByID, after, parts)
	if err != nil {
		t.Fatal(err)
	}
	moved, _ := movement(a, b, "", "")
	return moved
}

// TestRendezvousSpreadsTopics: the topic is part of the weight, so many
// small topics spread over the group rather than all landing on the same
// few instances (range gives each topic's partitions to the first
// instances in ID order).
func TestRendezvousSpreadsTopics(t *testing.T) {
	inst := members(rand.New(rand.NewPCG(1, 1)), 16)
	load := map[string]int{}
	for i := range 32 {
		for id, ps := range Rendezvous(fmt.Sprintf("topic-%d", i), inst, partitionRange(4)) {
			load[id] += len(ps)
		}
	}
	// 128 partitions over 16 instances: 8 each on average; range would
	// give the first four instances 32 each and the rest none.
	if len(load) != len(inst) {
		t.Fatalf("%d of %d instances got a partition: %v", len(load), len(inst), load)
	}
	for id, n := range load {
		if n > 16 {
			t.Errorf("%s got %d of 128 partitions", id, n)
		}
	}
}

// sortedGreedy is matchByWeight's definition, written out: sort every
// (instance, partition) pair by descending weight (ties: instance index,
// then partition index) and keep a pair while its partition is free and
// its instance has room.
func sortedGreedy(topic string, instances []string, parts []Partition, bound loadBound) []int32 {
	type pair struct {
		w    uint64
		i, j int32
	}
	var pairs []pair
	for i, id := range instances {
		for j, x := range parts {
			pairs = append(pairs, pair{weight(instanceKey(topic, id), x.ID), int32(i), int32(j)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		if a.i != b.i {
			return int(a.i - b.i)
		}
		return int(a.j - b.j)
	})
	owner := make([]int32, len(parts))
	for j := range owner {
		owner[j] = -1
	}
	load := make([]int, len(instances))
	extras := 0
	for _, x := range pairs {
		if owner[x.j] >= 0 || load[x.i] > bound.base || load[x.i] == bound.base && extras == bound.extra {
			continue
		}
		owner[x.j] = x.i
		if load[x.i] == bound.base {
			extras++
		}
		load[x.i]++
	}
	return owner
}

// TestMatchByWeightIsTheSortedGreedy: the heap gives what sorting every
// pair gives, for any capacity that fits every partition.
func TestMatchByWeightIsTheSortedGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 13))
	for range 300 {
		inst := slices.Sorted(slices.Values(members(r, 1+r.IntN(20))))
		parts := partitionRange(r.IntN(200))
		bound := evenBound(len(parts), len(inst))
		if r.IntN(2) == 0 { // a looser bound
			bound = loadBound{ceilDiv(len(parts), len(inst)) + r.IntN(3), 0}
		}
		got := matchByWeight("t", inst, parts, bound)
		if want := sortedGreedy("t", inst, parts, bound); !slices.Equal(got, want) {
			t.Fatalf("%d instances, %d partitions, bound %v:\n got %v\nwant %v", len(inst), len(parts), bound, got, want)
		}
	}
}

// ceilDiv is ceil(a/b) for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
