package assign

import (
	"cmp"
	"container/heap"
	"hash/fnv"
	"slices"
)

// Rendezvous divides one topic's partitions between instanceIDs by rendezvous
// (highest-random-weight) hashing with bounded load, and returns each
// instance's partitions sorted by ID. It is the assignment Sticky
// names once every member offers it (see Topics); docs/assignment.md has
// the argument and the measured balance and movement.
//
// Every (instance, partition) pair has a weight, a hash of the topic, the
// instance ID and the partition ID (see weight). The load is bounded as
// range's is: with P partitions and N instances each takes P/N, and P%N of
// them (the first to reach it) one more. The pairs are taken in descending
// weight (ties: the smaller instance ID, then the smaller partition ID), a
// pair being kept when its partition is still free and its instance still
// has room: a partition goes to the instance that wants it most, unless
// that instance filled up with partitions it wants more. The order is a
// function of the sets of instances and partitions only, so the result
// never depends on their order or on history.
//
// When a member joins or leaves, the partitions that move are the joiner's
// (about P/(N+1)) or the leaver's, plus those that fall through to another
// choice as the bound changes: about 55 of 1,024 over 32 instances, where
// range moves 330 or more.
//
// Input is handled as Assign handles it: repeated instance IDs count once,
// a repeated partition ID is assigned once (its entry with the lowest
// leader), instances that get nothing have no entry, and with no instances
// the map is empty. Leaders never matter otherwise.
//
// The weights and the order are part of the protocol: instances of
// different versions must compute the same result, so a change of either
// needs a new strategy name.
func Rendezvous(topic string, instanceIDs []string, partitions []Partition) map[string][]Partition {
	instances := slices.Clone(instanceIDs)
	slices.Sort(instances)
	instances = slices.Compact(instances)

	parts := slices.Clone(partitions)
	slices.SortFunc(parts, func(a, b Partition) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Leader, b.Leader))
	})
	parts = dedupePartitions(parts)

	result := make(map[string][]Partition)
	if len(instances) == 0 || len(parts) == 0 {
		return result
	}
	owner := matchByWeight(topic, instances, parts, evenBound(len(parts), len(instances)))
	for i, p := range parts { // in ID order, so each share is sorted
		id := instances[owner[i]]
		result[id] = append(result[id], p)
	}
	return result
}

// loadBound is how many partitions an instance may take: base, and base+1
// for at most extra instances (the first to reach base+1).
type loadBound struct{ base, extra int }

// evenBound is range's balance for p partitions over n instances: p/n
// each, and p%n of them one more.
func evenBound(p, n int) loadBound { return loadBound{p / n, p % n} }

// matchByWeight returns, for each of parts, the index of its instance: the
// (instance, partition) pairs taken in descending weight (ties: the lower
// instance index, then the lower partition index), each kept while its
// partition is free and its instance has room under bound. instances must
// be sorted and parts sorted by ID, so that index order is ID order.
//
// Rather than sorting all P×N pairs, it keeps each free partition's best
// candidate among the instances with room in a heap: an instance that is
// full stays full, so a popped candidate whose instance filled up meanwhile
// is replaced by the partition's next best with room, and the first
// candidate popped with room is the next pair of the descending order that
// is kept. TestMatchByWeightIsTheSortedGreedy checks it against the sort.
func matchByWeight(topic string, instances []string, parts []Partition, bound loadBound) []int32 {
	keys := make([]uint64, len(instances))
	for i, id := range instances {
		keys[i] = instanceKey(topic, id)
	}
	load := make([]int, len(instances))
	extras := 0 // instances holding bound.base+1
	room := func(i int32) bool {
		return load[i] < bound.base || load[i] == bound.base && extras < bound.extra
	}
	best := func(j int32) candidate {
		c := candidate{instance: -1, partition: j}
		for i, key := range keys {
			if !room(int32(i)) {
				continue
			}
			if w := weight(key, parts[j].ID); c.instance < 0 || w > c.weight {
				c.weight, c.instance = w, int32(i)
			}
		}
		return c
	}

	h := make(candidates, len(parts))
	for j := range parts {
		h[j] = best(int32(j))
	}
	heap.Init(&h)
	owner := make([]int32, len(parts))
	for h.Len() > 0 {
		c := h[0]
		if !room(c.instance) {
			h[0] = best(c.partition) // some instance has room: the bound fits every partition
			heap.Fix(&h, 0)
			continue
		}
		heap.Pop(&h)
		owner[c.partition] = c.instance
		if load[c.instance] == bound.base {
			extras++
		}
		load[c.instance]++
	}
	return owner
}

// candidate is a free partition's best instance with room, by index into
// matchByWeight's instances and parts.
type candidate struct {
	weight    uint64
	instance  int32
	partition int32
}

// candidates is a heap of candidates, the heaviest pair first (ties: the
// lower instance, then the lower partition).
type candidates []candidate

func (h candidates) Len() int { return len(h) }
func (h candidates) Less(a, b int) bool {
	return cmp.Or(cmp.Compare(h[b].weight, h[a].weight), cmp.Compare(h[a].instance, h[b].instance), cmp.Compare(h[a].partition, h[b].partition)) < 0
}
func (h candidates) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *candidates) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// instanceKey is the part of an instance's weights that does not depend on
// the partition: FNV-1a (64 bits) of the topic, a zero byte and the
// instance ID. The topic is in it so that the partitions of topics with the
// same partition count do not all go to the same instances.
func instanceKey(topic, instanceID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(topic))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(instanceID))
	return h.Sum64()
}

// weight is how much the instance with key wants partition:
// splitmix64(key XOR splitmix64(partition)), the partition ID taken as an
// unsigned 32-bit number.
func weight(key uint64, partition int32) uint64 {
	return splitmix64(key ^ splitmix64(uint64(uint32(partition))))
}

// splitmix64 is one step of Steele, Lea and Flood's SplitMix64 generator
// from state x: it spreads every input bit over the whole output, so
// weights of neighbouring IDs look unrelated.
func splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
