package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// p is shorthand for a Partition.
func p(id, leader int32) Partition { return Partition{ID: id, Leader: leader} }

// ids returns the partition IDs of ps, in order.
func ids(ps []Partition) []int32 {
	out := make([]int32, len(ps))
	for i, x := range ps {
		out[i] = x.ID
	}
	return out
}

// idMap turns an assignment into instance -> partition IDs.
func idMap(a map[string][]Partition) map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for k, v := range a {
		out[k] = ids(v)
	}
	return out
}

// TestAssignUpstreamGolden lists what upstream's dividePartitionsBetweenConsumers
// (consumergroup/utils.go) returns for these inputs, worked out by hand from
// its algorithm: instances sorted by ID, partitions sorted by (leader, id),
// each instance i takes the next P/C partitions plus one if i < P%C, and an
// instance with no partition has no map entry.
func TestAssignUpstreamGolden(t *testing.T) {
	tests := []struct {
		name       string
		instances  []string
		partitions []Partition
		want       map[string][]int32
	}{
		{
			// Upstream's own Test_PartitionDivision.
			name:       "upstream test",
			instances:  []string{"consumer1", "consumer2"},
			partitions: []Partition{p(0, 1), p(1, 2), p(2, 1), p(3, 2), p(4, 1)},
			want:       map[string][]int32{"consumer1": {0, 2, 4}, "consumer2": {1, 3}},
		},
		{
			name:       "more instances than partitions",
			instances:  []string{"d", "c", "b", "a"},
			partitions: []Partition{p(0, 5), p(1, 3)},
			want:       map[string][]int32{"a": {1}, "b": {0}},
		},
		{
			name:       "no partitions",
			instances:  []string{"a", "b"},
			partitions: nil,
			want:       map[string][]int32{},
		},
		{
			name:       "no instances",
			instances:  nil,
			partitions: []Partition{p(0, 1)},
			want:       map[string][]int32{},
		},
		{
			// Leaders 1+id%3; byte-wise order of IDs: "B-host" < "Z" < "a-host".
			name:       "ten over three, byte-wise instance order",
			instances:  []string{"a-host", "Z", "B-host"},
			partitions: []Partition{p(0, 1), p(1, 2), p(2, 3), p(3, 1), p(4, 2), p(5, 3), p(6, 1), p(7, 2), p(8, 3), p(9, 1)},
			want:       map[string][]int32{"B-host": {0, 3, 6, 9}, "Z": {1, 4, 7}, "a-host": {2, 5, 8}},
		},
		{
			name:       "leaderless partitions sort first",
			instances:  []string{"y", "x"},
			partitions: []Partition{p(0, 2), p(1, -1), p(2, 1), p(3, -1)},
			want:       map[string][]int32{"x": {1, 3}, "y": {2, 0}},
		},
		{
			name:       "one each",
			instances:  []string{"c", "a", "b"},
			partitions: []Partition{p(2, 7), p(0, 7), p(1, 7)},
			want:       map[string][]int32{"a": {0}, "b": {1}, "c": {2}},
		},
		{
			// 7 over 4: the first three get two, the last one.
			name:       "remainder goes to the first instances",
			instances:  []string{"i4", "i3", "i2", "i1"},
			partitions: []Partition{p(0, 2), p(1, 1), p(2, 2), p(3, 1), p(4, 3), p(5, 1), p(6, 2)},
			want:       map[string][]int32{"i1": {1, 3}, "i2": {5, 0}, "i3": {2, 6}, "i4": {4}},
		},
		{
			// Realistic kazoo-go instance IDs (hostname:uuid).
			name:      "single instance takes all",
			instances: []string{"web-1:7c9e6679-7425-40de-944b-e07fc1f90ae7"},
			partitions: []Partition{
				p(3, 1002), p(0, 1001), p(1, 1002), p(2, 1001),
			},
			want: map[string][]int32{"web-1:7c9e6679-7425-40de-944b-e07fc1f90ae7": {0, 2, 1, 3}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(RangeByLeader, tc.instances, tc.partitions)
			if err != nil {
				t.Fatal(err)
			}
			if g := idMap(got); !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("got %v, want %v", g, tc.want)
			}
		})
	}
}

func TestAssignRangeByIDGolden(t *testing.T) {
	tests := []struct {
		name       string
		instances  []string
		partitions []Partition
		want       map[string][]int32
	}{
		{
			name:       "upstream test inputs",
			instances:  []string{"consumer1", "consumer2"},
			partitions: []Partition{p(0, 1), p(1, 2), p(2, 1), p(3, 2), p(4, 1)},
			want:       map[string][]int32{"consumer1": {0, 1, 2}, "consumer2": {3, 4}},
		},
		{
			name:       "seven over four",
			instances:  []string{"i4", "i3", "i2", "i1"},
			partitions: []Partition{p(0, 2), p(1, 1), p(2, 2), p(3, 1), p(4, 3), p(5, 1), p(6, 2)},
			want:       map[string][]int32{"i1": {0, 1}, "i2": {2, 3}, "i3": {4, 5}, "i4": {6}},
		},
		{
			name:       "more instances than partitions",
			instances:  []string{"c", "b", "a"},
			partitions: []Partition{p(1, 9), p(0, 8)},
			want:       map[string][]int32{"a": {0}, "b": {1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(RangeByID, tc.instances, tc.partitions)
			if err != nil {
				t.Fatal(err)
			}
			if g := idMap(got); !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("got %v, want %v", g, tc.want)
			}
		})
	}
}

func TestAssignUnknownStrategy(t *testing.T) {
	for _, s := range []Strategy{"", "roundrobin", "Range-By-Leader"} {
		got, err := Assign(s, []string{"a"}, []Partition{p(0, 1)})
		if !errors.Is(err, ErrUnknownStrategy) || got != nil {
			t.Errorf("Assign(%q) = %v, %v; want nil, ErrUnknownStrategy", s, got, err)
		}
	}
}

func TestAssignDuplicates(t *testing.T) {
	got, err := Assign(RangeByLeader, []string{"b", "a", "b"}, []Partition{p(0, 2), p(1, 1), p(0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	// Instances a, b; partitions deduplicated to 0(leader 1), 1(leader 1).
	want := map[string][]Partition{"a": {p(0, 1)}, "b": {p(1, 1)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// randomInput returns nInst instance IDs and nPart partitions with IDs 0..nPart-1
// (in random order) and random leaders among nBrokers brokers (or -1).
func randomInput(r *rand.Rand, nInst, nPart, nBrokers int) ([]string, []Partition) {
	inst := make([]string, nInst)
	for i := range inst {
		inst[i] = fmt.Sprintf("host-%d:%08x", r.IntN(50), r.Uint32())
	}
	inst = slices.Compact(slices.Sorted(slices.Values(inst)))
	r.Shuffle(len(inst), func(i, j int) { inst[i], inst[j] = inst[j], inst[i] })
	parts := make([]Partition, nPart)
	for i := range parts {
		parts[i] = p(int32(i), int32(r.IntN(nBrokers+1))-1)
	}
	r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return inst, parts
}

func TestAssignProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, strategy := range []Strategy{RangeByLeader, RangeByID} {
		for iter := 0; iter < 500; iter++ {
			inst, parts := randomInput(r, 1+r.IntN(12), r.IntN(40), 1+r.IntN(5))
			instCopy, partsCopy := slices.Clone(inst), slices.Clone(parts)

			got, err := Assign(strategy, inst, parts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(inst, instCopy) || !slices.Equal(parts, partsCopy) {
				t.Fatal("Assign must not modify its arguments")
			}

			// Every partition exactly once, to a known instance, unchanged.
			seen := map[int32]string{}
			for owner, ps := range got {
				if !slices.Contains(inst, owner) {
					t.Fatalf("unknown owner %q", owner)
				}
				if len(ps) == 0 {
					t.Fatalf("%q has an empty entry; upstream leaves it out", owner)
				}
				for _, x := range ps {
					if prev, dup := seen[x.ID]; dup {
						t.Fatalf("partition %d assigned to %q and %q", x.ID, prev, owner)
					}
					seen[x.ID] = owner
					if !slices.Contains(parts, x) {
						t.Fatalf("partition %v altered", x)
					}
				}
			}
			if len(seen) != len(parts) {
				t.Fatalf("%d of %d partitions assigned", len(seen), len(parts))
			}

			// Balanced within one, larger shares to the first instances.
			sorted := slices.Sorted(slices.Values(inst))
			for i := 1; i < len(sorted); i++ {
				a, b := len(got[sorted[i-1]]), len(got[sorted[i]])
				if a < b || a-b > 1 {
					t.Fatalf("shares %d then %d for consecutive instances", a, b)
				}
			}
			if n := len(sorted); n > 0 && len(got[sorted[0]])-len(got[sorted[n-1]]) > 1 {
				t.Fatal("unbalanced")
			}

			// Concatenated in instance order, the shares are the partitions in
			// the strategy's order: consecutive ranges.
			var concat []Partition
			for _, id := range sorted {
				concat = append(concat, got[id]...)
			}
			ordered := slices.Clone(parts)
			slices.SortFunc(ordered, func(a, b Partition) int {
				if strategy == RangeByLeader && a.Leader != b.Leader {
					return int(a.Leader - b.Leader)
				}
				return int(a.ID - b.ID)
			})
			if !slices.Equal(concat, ordered) {
				t.Fatalf("not consecutive ranges: %v vs %v", ids(concat), ids(ordered))
			}

			// Deterministic under shuffled input.
			r.Shuffle(len(inst), func(i, j int) { inst[i], inst[j] = inst[j], inst[i] })
			r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			again, _ := Assign(strategy, inst, parts)
			if !reflect.DeepEqual(again, got) {
				t.Fatal("result depends on input order")
			}
		}
	}
}

func TestAssignRangeByIDIgnoresLeaders(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 200; iter++ {
		inst, parts := randomInput(r, 1+r.IntN(8), r.IntN(30), 4)
		before, _ := Assign(RangeByID, inst, parts)
		moved := slices.Clone(parts)
		for i := range moved {
			moved[i].Leader = int32(r.IntN(6))
		}
		after, _ := Assign(RangeByID, inst, moved)
		if !reflect.DeepEqual(idMap(before), idMap(after)) {
			t.Fatalf("leader movement moved partitions: %v -> %v", idMap(before), idMap(after))
		}
	}
}
