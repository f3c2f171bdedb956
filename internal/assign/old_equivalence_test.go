package assign

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// The assignment as consumergroup computed it before it moved here
// (ad4d418: consumergroup/assignment.go and subscription.go), copied
// verbatim but for the names, so a change of the moved code's result for
// any input shows up.

func oldAssign(strategy Strategy, instanceIDs []string, partitions []Partition) (map[string][]Partition, error) {
	var less func(a, b Partition) int
	switch strategy {
	case "range-by-leader":
		less = func(a, b Partition) int {
			return cmp.Or(cmp.Compare(a.Leader, b.Leader), cmp.Compare(a.ID, b.ID))
		}
	case "range-by-id":
		less = func(a, b Partition) int {
			return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Leader, b.Leader))
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownStrategy, string(strategy))
	}
	instances := slices.Clone(instanceIDs)
	slices.Sort(instances)
	instances = slices.Compact(instances)
	parts := slices.Clone(partitions)
	slices.SortFunc(parts, less)
	seen := make(map[int32]bool, len(parts))
	out := parts[:0]
	for _, p := range parts {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	parts = out
	result := make(map[string][]Partition)
	if len(instances) == 0 {
		return result, nil
	}
	per, extra := len(parts)/len(instances), len(parts)%len(instances)
	first := 0
	for i, id := range instances {
		n := per
		if i < extra {
			n++
		}
		if n > 0 {
			result[id] = slices.Clip(parts[first : first+n])
		}
		first += n
	}
	return result, nil
}

func oldAssignTopics(strategy Strategy, members []Member, partitions map[string][]Partition) (map[string]map[string][]Partition, error) {
	topics := make([]string, 0, len(partitions))
	for topic := range partitions {
		topics = append(topics, topic)
	}
	byTopic := make(map[string][]string, len(topics))
	for _, topic := range topics {
		var ids []string
		for _, m := range members {
			if m.Sub.Includes(topic) {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			byTopic[topic] = slices.Compact(ids)
		}
	}
	out := make(map[string]map[string][]Partition)
	for _, topic := range topics {
		assigned, err := oldAssign(strategy, byTopic[topic], partitions[topic])
		if err != nil {
			return nil, err
		}
		for id, parts := range assigned {
			if out[id] == nil {
				out[id] = make(map[string][]Partition)
			}
			out[id][topic] = parts
		}
	}
	return out, nil
}

// randomMembers returns members with static, white_list and black_list
// subscriptions over topics, some IDs repeated.
func randomMembers(r *rand.Rand, topics []string) []Member {
	n := r.IntN(7)
	ms := make([]Member, 0, n)
	for range n {
		id := fmt.Sprintf("host:%d", r.IntN(6))
		var reg *kazoo.Registration
		switch r.IntN(4) {
		case 0:
			reg = &kazoo.Registration{Pattern: kazoo.RegPatternWhiteList, Subscription: map[string]int{"t[0-" + fmt.Sprint(r.IntN(4)) + "]": 1}}
		case 1:
			reg = &kazoo.Registration{Pattern: kazoo.RegPatternBlackList, Subscription: map[string]int{topics[r.IntN(len(topics))]: 1}}
		default:
			sub := map[string]int{}
			for _, t := range topics {
				if r.IntN(2) == 0 {
					sub[t] = 1
				}
			}
			reg = &kazoo.Registration{Pattern: kazoo.RegPatternStatic, Subscription: sub}
		}
		sub, err := ParseSubscription(reg)
		if err != nil {
			panic(err)
		}
		ms = append(ms, Member{ID: id, Sub: sub})
	}
	return ms
}

func randomPartitions(r *rand.Rand, topics []string) map[string][]Partition {
	out := map[string][]Partition{}
	for _, t := range topics {
		if r.IntN(5) == 0 {
			continue // missing
		}
		n := r.IntN(12)
		ps := make([]Partition, 0, n)
		for range n {
			ps = append(ps, Partition{ID: int32(r.IntN(10)), Leader: int32(r.IntN(4)) - 1})
		}
		out[t] = ps
	}
	return out
}

// TestTopicsMatchesTheOldCode: for random members (static, white_list and
// black_list subscriptions, repeated IDs) and partitions (repeated IDs,
// leaderless ones, missing topics), Topics and Assign give exactly what
// consumergroup's code gave before the move, for both strategies, and
// leave their input as it was.
func TestTopicsMatchesTheOldCode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	topics := []string{"t0", "t1", "t2", "t3", "__consumer_offsets"}
	for i := range 4000 {
		members := randomMembers(r, topics)
		parts := randomPartitions(r, topics)
		for _, s := range []Strategy{RangeByLeader, RangeByID} {
			before := fmt.Sprint(parts)
			got, err := Topics(s, members, parts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(parts) != before {
				t.Fatalf("case %d: Topics changed its input", i)
			}
			want, _ := oldAssignTopics(s, members, parts)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d %s: members %v partitions %v:\n got %v\nwant %v", i, s, members, parts, got, want)
			}
			for topic, ps := range parts {
				ids := make([]string, 0, len(members))
				for _, m := range members {
					ids = append(ids, m.ID)
				}
				got, _ := Assign(s, ids, ps)
				want, _ := oldAssign(s, ids, ps)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("case %d %s topic %s: Assign %v, old %v", i, s, topic, got, want)
				}
			}
		}
	}
	if _, err := Topics("range", nil, map[string][]Partition{"t": {{ID: 0}}}); err == nil {
		t.Error("an unknown strategy gave no error")
	}
}
