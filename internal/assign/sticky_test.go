package assign

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// offering returns m with its registration offering strategies.
func offering(m Member, strategies ...Strategy) Member {
	m.Offers = strategies
	return m
}

func TestInEffect(t *testing.T) {
	a := Member{ID: "a", Sub: Static("t")}
	b := Member{ID: "b", Sub: Static("t")}
	tests := []struct {
		name     string
		strategy Strategy
		members  []Member
		want     Strategy
	}{
		{"all offer sticky", Sticky, []Member{offering(a, Sticky), offering(b, RangeByID, Sticky)}, Sticky},
		{"one offers nothing (upstream)", Sticky, []Member{offering(a, Sticky), b}, RangeByLeader},
		{"one offers another strategy only", Sticky, []Member{offering(a, Sticky), offering(b, "sticky-v2")}, RangeByLeader},
		{"no members", Sticky, nil, Sticky},
		{"range-by-leader stays", RangeByLeader, []Member{offering(a, Sticky)}, RangeByLeader},
		{"range-by-id stays", RangeByID, []Member{offering(a, Sticky), offering(b, Sticky)}, RangeByID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := InEffect(tc.strategy, tc.members); got != tc.want {
				t.Fatalf("InEffect(%s) = %s, want %s", tc.strategy, got, tc.want)
			}
		})
	}
}

// TestTopicsStickyFallsBackToRange: while one member (an upstream
// instance, or one of ours configured with a range strategy) offers
// nothing, a sticky group computes exactly RangeByLeader, which that
// member computes too; once all offer it, each topic is Rendezvous between
// its subscribers.
func TestTopicsStickyFallsBackToRange(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	topics := []string{"t0", "t1", "t2", "t3"}
	for i := range 1000 {
		members := randomMembers(r, topics)
		parts := randomPartitions(r, topics)
		for j := range members {
			members[j].Offers = []Strategy{Sticky}
		}
		holdout := len(members) > 0 && r.IntN(2) == 0
		if holdout {
			members[r.IntN(len(members))].Offers = nil
		}
		got, err := Topics(Sticky, members, parts)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]map[string][]Partition
		if holdout {
			want, _ = Topics(RangeByLeader, members, parts)
		} else {
			want = stickyByTopic(members, parts)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (a member offers nothing: %v): members %v partitions %v:\n got %v\nwant %v",
				i, holdout, members, parts, topicIDMap(got), topicIDMap(want))
		}
	}
}

// stickyByTopic is Rendezvous of each topic between the IDs of the
// members subscribing to it, written out from the definition.
func stickyByTopic(members []Member, parts map[string][]Partition) map[string]map[string][]Partition {
	out := map[string]map[string][]Partition{}
	for topic, ps := range parts {
		var subscribers []string
		for _, m := range members {
			if m.Sub.Includes(topic) {
				subscribers = append(subscribers, m.ID)
			}
		}
		for id, share := range Rendezvous(topic, subscribers, ps) {
			if out[id] == nil {
				out[id] = map[string][]Partition{}
			}
			out[id][topic] = share
		}
	}
	return out
}

// TestTopicsStickyDifferentSubscriptions: each topic goes only to its
// subscribers, each taking at most ceil(P/N) of it for the N subscribers,
// and the group agrees whatever order each instance lists it in.
func TestTopicsStickyDifferentSubscriptions(t *testing.T) {
	members := []Member{
		offering(Member{ID: "a", Sub: Static("t1")}, Sticky),
		offering(Member{ID: "b", Sub: Static("t1", "t2")}, Sticky),
		offering(Member{ID: "c", Sub: Static("t2", "t3")}, Sticky),
		offering(Member{ID: "d", Sub: Subscription{}}, Sticky),
		offering(Member{ID: "e", Sub: Static("t1", "t2", "t3")}, Sticky),
	}
	parts := map[string][]Partition{"t1": partitionRange(10), "t2": partitionRange(7), "t3": partitionRange(5), "t4": partitionRange(3)}
	want, err := Topics(Sticky, members, parts)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, members, parts, want)
	subscribers := map[string]int{"t1": 3, "t2": 3, "t3": 2}
	for id, byTopic := range want {
		for topic, ps := range byTopic {
			if limit := ceilDiv(len(parts[topic]), subscribers[topic]); len(ps) > limit {
				t.Errorf("%s has %d of %s, more than %d", id, len(ps), topic, limit)
			}
		}
	}
	r := rand.New(rand.NewPCG(2, 3))
	for range 50 {
		shuffled := slices.Clone(members)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got, _ := Topics(Sticky, shuffled, parts); !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v: got %v, want %v", shuffled, topicIDMap(got), topicIDMap(want))
		}
	}
}

func TestAssignSticky(t *testing.T) {
	if _, err := Assign(Sticky, []string{"a"}, []Partition{p(0, 1)}); !errors.Is(err, ErrUnknownStrategy) {
		t.Errorf("Assign(Sticky) err = %v: it has no topic to hash", err)
	}
	got, err := AssignTopic(Sticky, "t", []string{"a", "b"}, partitionRange(6))
	if err != nil || !reflect.DeepEqual(got, Rendezvous("t", []string{"a", "b"}, partitionRange(6))) {
		t.Errorf("AssignTopic(Sticky) = %v, %v", got, err)
	}
	got, err = AssignTopic(RangeByID, "t", []string{"a", "b"}, partitionRange(6))
	if want, _ := Assign(RangeByID, []string{"a", "b"}, partitionRange(6)); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("AssignTopic(RangeByID) = %v, %v", got, err)
	}
	if !Sticky.Valid() || !Sticky.UsesLeaders() || RangeByID.UsesLeaders() {
		t.Error("Sticky is valid and falls back to RangeByLeader, which reads leaders")
	}
}

// TestOffers: what a registration offers, as written and as read back.
func TestOffers(t *testing.T) {
	if got := Sticky.Offered(); !slices.Equal(got, []string{"sticky"}) {
		t.Errorf("Sticky offers %q", got)
	}
	if RangeByLeader.Offered() != nil || RangeByID.Offered() != nil {
		t.Error("range strategies offer nothing")
	}
	if got := OfferedBy(&kazoo.Registration{Assignment: []string{"sticky", "x"}}); !slices.Equal(got, []Strategy{Sticky, "x"}) {
		t.Errorf("OfferedBy = %q", got)
	}
	if OfferedBy(nil) != nil {
		t.Error("an unreadable registration offers nothing")
	}
	if got := OfferedBy(&kazoo.Registration{}); len(got) != 0 {
		t.Errorf("an upstream registration offers %q", got)
	}
}
