package kazoo

import (
	"slices"
	"testing"
)

// fakeMultis answers inRounds' Multis as ZooKeeper would for a batch in
// which the partitions in held refuse (each an owner node that exists):
// a Multi is refused by the first held partition it carries, and applies
// when it carries none. unnamed refuses every Multi without naming one.
type fakeMultis struct {
	held    map[int]bool
	unnamed bool
	sent    [][]int // every Multi's partitions, in order
	applied []int   // the partitions of the Multi that applied
}

func (f *fakeMultis) send(parts []int) batchRound {
	f.sent = append(f.sent, slices.Clone(parts))
	if f.unnamed {
		return batchRound{refusedBy: -1}
	}
	for k, i := range parts {
		if f.held[i] {
			return batchRound{refusedBy: k}
		}
	}
	f.applied = slices.Clone(parts)
	return batchRound{done: true}
}

func heldSet(parts ...int) map[int]bool {
	m := make(map[int]bool)
	for _, p := range parts {
		m[p] = true
	}
	return m
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestInRoundsRetriesTheRestOfARefusedBatch(t *testing.T) {
	manyHeld := seq(0, 64)
	for i := range manyHeld {
		manyHeld[i] = 4 * i // every fourth partition of 256
	}
	for _, tc := range []struct {
		name      string
		n         int
		held      []int
		unnamed   bool
		wantAlone []int
		wantSent  int
	}{
		{name: "none held", n: 8, wantSent: 1},
		{name: "one held in the middle", n: 8, held: []int{5}, wantAlone: []int{5}, wantSent: 2},
		{name: "one held in front", n: 8, held: []int{0}, wantAlone: []int{0}, wantSent: 2},
		{name: "two held", n: 8, held: []int{2, 6}, wantAlone: []int{2, 6}, wantSent: 3},
		// The first two Multis are refused by their first partition: the
		// rest goes alone, one Multi more than refusing at once.
		{name: "all held", n: 8, held: seq(0, 8), wantAlone: seq(0, 8), wantSent: 2},
		{name: "refusal that names no partition", n: 8, unnamed: true, wantAlone: seq(0, 8), wantSent: 1},
		// One left after a refusal: it goes alone, not in a Multi of one.
		{name: "two, one held", n: 2, held: []int{1}, wantAlone: []int{0, 1}, wantSent: 1},
		{name: "one, held", n: 1, held: []int{0}, wantAlone: []int{0}, wantSent: 1},
		{name: "one, free", n: 1, wantSent: 1},
		// A quarter held: after maxBatchRefusals refusals the partitions
		// the last refusal showed free go in one last Multi, every one
		// after it alone.
		{name: "a quarter held", n: 256, held: manyHeld,
			wantAlone: append(slices.Clone(manyHeld[:maxBatchRefusals]), seq(4*maxBatchRefusals-3, 256)...),
			wantSent:  maxBatchRefusals + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeMultis{held: heldSet(tc.held...), unnamed: tc.unnamed}
			alone := inRounds(tc.n, f.send)
			slices.Sort(alone)
			want := slices.Clone(tc.wantAlone)
			slices.Sort(want)
			if !slices.Equal(alone, want) {
				t.Errorf("alone %v, want %v", alone, want)
			}
			if len(f.sent) != tc.wantSent {
				t.Errorf("%d Multis sent (%v), want %d", len(f.sent), f.sent, tc.wantSent)
			}
			// Every partition is answered once: by the Multi that
			// applied, or alone.
			answered := append(slices.Clone(f.applied), alone...)
			slices.Sort(answered)
			if !slices.Equal(answered, seq(0, tc.n)) {
				t.Errorf("applied %v and alone %v: not each of the %d partitions once", f.applied, alone, tc.n)
			}
			for _, i := range f.applied {
				if f.held[i] {
					t.Errorf("held partition %d in the Multi that applied", i)
				}
			}
		})
	}
}

// A last Multi (of the partitions a refusal showed free) that is refused
// all the same, the nodes having changed meanwhile, sends nothing more:
// every partition of it goes alone.
func TestInRoundsEndsAfterTheLastMultiIsRefused(t *testing.T) {
	sent := 0
	alone := inRounds(256, func(parts []int) batchRound {
		sent++
		return batchRound{refusedBy: len(parts) / 2} // always refused halfway
	})
	if sent > maxBatchRefusals+1 {
		t.Errorf("%d Multis sent, want at most %d", sent, maxBatchRefusals+1)
	}
	slices.Sort(alone)
	if !slices.Equal(alone, seq(0, 256)) {
		t.Errorf("alone %v, want every partition", alone)
	}
}
