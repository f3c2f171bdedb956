package kazoo

import (
	"slices"
	"testing"
)

// inBatches cuts at MaxBatch partitions, and earlier where the partitions'
// strings would take a Multi over maxMultiBytes; a partition too big for
// any Multi still goes, alone.
func TestInBatchesBoundsCountAndBytes(t *testing.T) {
	ranges := func(n int, size func(int) int) [][2]int {
		var got [][2]int
		inBatches(n, size, func(start, end int) { got = append(got, [2]int{start, end}) })
		return got
	}
	small := func(int) int { return 100 }
	if got, want := ranges(2*MaxBatch+1, small), [][2]int{{0, MaxBatch}, {MaxBatch, 2 * MaxBatch}, {2 * MaxBatch, 2*MaxBatch + 1}}; !slices.Equal(got, want) {
		t.Errorf("small partitions: %v, want %v", got, want)
	}
	third := maxMultiBytes/3 - 2*multiOpBytes
	if got, want := ranges(7, func(int) int { return third }), [][2]int{{0, 3}, {3, 6}, {6, 7}}; !slices.Equal(got, want) {
		t.Errorf("partitions of a third of a Multi each: %v, want %v", got, want)
	}
	if got, want := ranges(2, func(int) int { return 2 * maxMultiBytes }), [][2]int{{0, 1}, {1, 2}}; !slices.Equal(got, want) {
		t.Errorf("partitions over a Multi each: %v, want %v", got, want)
	}
	if got := ranges(0, small); got != nil {
		t.Errorf("no partitions: %v, want no batch", got)
	}
}
