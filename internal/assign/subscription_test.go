package assign

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// wildcard is a white_list or black_list subscription to expr.
func wildcard(t *testing.T, pattern kazoo.RegPattern, expr string) Subscription {
	t.Helper()
	s, err := ParseSubscription(&kazoo.Registration{Pattern: pattern, Subscription: map[string]int{expr: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// topicIDMap turns Topics' result into instance -> topic -> IDs.
func topicIDMap(a map[string]map[string][]Partition) map[string]map[string][]int32 {
	out := make(map[string]map[string][]int32, len(a))
	for id, byTopic := range a {
		out[id] = make(map[string][]int32, len(byTopic))
		for topic, ps := range byTopic {
			out[id][topic] = ids(ps)
		}
	}
	return out
}

func TestParseSubscription(t *testing.T) {
	reg := func(pattern kazoo.RegPattern, keys ...string) *kazoo.Registration {
		r := &kazoo.Registration{Pattern: pattern, Subscription: map[string]int{}, Version: 1}
		for _, k := range keys {
			r.Subscription[k] = 1
		}
		return r
	}
	tests := []struct {
		name    string
		reg     *kazoo.Registration
		in, out []string
		bad     bool
	}{
		{name: "static", reg: reg(kazoo.RegPatternStatic, "t1", "t2"), in: []string{"t1", "t2"}, out: []string{"t3", "t", "t1x"}},
		{name: "static names are not expressions", reg: reg(kazoo.RegPatternStatic, "t.*"), in: []string{"t.*"}, out: []string{"t1"}},
		{name: "empty pattern reads as static", reg: reg("", "t1"), in: []string{"t1"}, out: []string{"t2"}},
		{name: "unknown pattern reads as static", reg: reg("other", "t1"), in: []string{"t1"}, out: []string{"t2"}},
		{name: "static with nothing", reg: reg(kazoo.RegPatternStatic), out: []string{"t1", ""}},
		{name: "nil map", reg: &kazoo.Registration{Pattern: kazoo.RegPatternStatic}, out: []string{"t1"}},
		{name: "white_list matches whole names", reg: reg(kazoo.RegPatternWhiteList, "orders.*"), in: []string{"orders", "orders-eu"}, out: []string{"old-orders", "t1"}},
		{name: "white_list alternation", reg: reg(kazoo.RegPatternWhiteList, "a|b"), in: []string{"a", "b"}, out: []string{"ab", "c"}},
		{name: "white_list commas, spaces and quotes as Kafka reads them", reg: reg(kazoo.RegPatternWhiteList, ` "a, b" `), in: []string{"a", "b"}, out: []string{"a,b", "a b", `"a`}},
		{name: "white_list leaves internal topics out", reg: reg(kazoo.RegPatternWhiteList, ".*"), in: []string{"t1", "_private"}, out: []string{"__consumer_offsets", "__transaction_state"}},
		{name: "black_list", reg: reg(kazoo.RegPatternBlackList, "test-.*"), in: []string{"t1", "prod-test-1"}, out: []string{"test-1", "__consumer_offsets"}},
		{name: "white_list with no expression subscribes to nothing", reg: reg(kazoo.RegPatternWhiteList), out: []string{"t1"}},
		{name: "two expressions", reg: reg(kazoo.RegPatternWhiteList, "a", "b"), out: []string{"a", "b"}, bad: true},
		{name: "expression Go cannot compile", reg: reg(kazoo.RegPatternBlackList, "(?<=x)y"), out: []string{"y", "t1"}, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := ParseSubscription(tc.reg)
			if tc.bad != (err != nil) {
				t.Fatalf("err = %v, want error: %v", err, tc.bad)
			}
			if err != nil && !errors.Is(err, ErrBadSubscription) {
				t.Fatalf("err = %v, does not wrap ErrBadSubscription", err)
			}
			for _, topic := range tc.in {
				if !sub.Includes(topic) {
					t.Errorf("does not include %q", topic)
				}
			}
			for _, topic := range tc.out {
				if sub.Includes(topic) {
					t.Errorf("includes %q", topic)
				}
			}
		})
	}
}

func TestTopicMembers(t *testing.T) {
	members := []Member{
		{ID: "c", Sub: Static("t1", "t2")},
		{ID: "a", Sub: Static("t1")},
		{ID: "b", Sub: Static("t1", "t2", "t3")},
		{ID: "d", Sub: Subscription{}},
	}
	got := TopicMembers(members, []string{"t1", "t2", "t3", "t4"})
	want := map[string][]string{"t1": {"a", "b", "c"}, "t2": {"b", "c"}, "t3": {"b"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAssignTopicsIdenticalSubscriptions: when every instance subscribes to
// the same topics, the assignment is Assign over all instances, topic by
// topic, exactly as before subscriptions were read (and as upstream
// instances compute it).
func TestAssignTopicsIdenticalSubscriptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	topics := []string{"t1", "t2", "t3"}
	for _, strategy := range []Strategy{RangeByLeader, RangeByID} {
		for round := range 200 {
			n := 1 + rng.IntN(6)
			var members []Member
			var instances []string
			for i := range n {
				id := string(rune('a'+rng.IntN(26))) + string(rune('0'+i))
				members = append(members, Member{ID: id, Sub: Static(topics...)})
				instances = append(instances, id)
			}
			partitions := make(map[string][]Partition)
			for _, topic := range topics {
				np := rng.IntN(12)
				for id := range np {
					partitions[topic] = append(partitions[topic], p(int32(id), int32(rng.IntN(3))-1))
				}
			}
			got, err := Topics(strategy, members, partitions)
			if err != nil {
				t.Fatal(err)
			}
			want := make(map[string]map[string][]Partition)
			for _, topic := range topics {
				a, err := Assign(strategy, instances, partitions[topic])
				if err != nil {
					t.Fatal(err)
				}
				for id, ps := range a {
					if want[id] == nil {
						want[id] = make(map[string][]Partition)
					}
					want[id][topic] = ps
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s round %d: instances %v, partitions %v:\n got %v\nwant %v", strategy, round, instances, partitions, got, want)
			}
		}
	}
}

func TestAssignTopics(t *testing.T) {
	four := []Partition{p(0, 1), p(1, 1), p(2, 1), p(3, 1)}
	tests := []struct {
		name       string
		members    []Member
		partitions map[string][]Partition
		want       map[string]map[string][]int32
	}{
		{
			// Dividing t2 between a and b would leave a's half unread.
			name:       "a={t1}, b={t1,t2}",
			members:    []Member{{ID: "a", Sub: Static("t1")}, {ID: "b", Sub: Static("t1", "t2")}},
			partitions: map[string][]Partition{"t1": four, "t2": four},
			want: map[string]map[string][]int32{
				"a": {"t1": {0, 1}},
				"b": {"t1": {2, 3}, "t2": {0, 1, 2, 3}},
			},
		},
		{
			name:       "disjoint subscriptions",
			members:    []Member{{ID: "a", Sub: Static("t1")}, {ID: "b", Sub: Static("t2")}},
			partitions: map[string][]Partition{"t1": four, "t2": four},
			want: map[string]map[string][]int32{
				"a": {"t1": {0, 1, 2, 3}},
				"b": {"t2": {0, 1, 2, 3}},
			},
		},
		{
			// t3 exists with no partitions, t4 does not exist (absent from
			// the view): neither gives anything, nor changes t1's split.
			name:       "subscribed to topics with no partitions",
			members:    []Member{{ID: "a", Sub: Static("t1", "t3", "t4")}, {ID: "b", Sub: Static("t1")}},
			partitions: map[string][]Partition{"t1": four, "t3": {}},
			want: map[string]map[string][]int32{
				"a": {"t1": {0, 1}},
				"b": {"t1": {2, 3}},
			},
		},
		{
			// An instance subscribing to nothing (for example a malformed
			// registration) takes no share: the others cover everything.
			name:       "an instance subscribed to nothing",
			members:    []Member{{ID: "a", Sub: Subscription{}}, {ID: "b", Sub: Static("t1")}, {ID: "c", Sub: Static("t1")}},
			partitions: map[string][]Partition{"t1": four},
			want: map[string]map[string][]int32{
				"b": {"t1": {0, 1}},
				"c": {"t1": {2, 3}},
			},
		},
		{
			name:       "nobody subscribes",
			members:    []Member{{ID: "a", Sub: Static("t9")}},
			partitions: map[string][]Partition{"t1": four},
			want:       map[string]map[string][]int32{},
		},
		{
			name: "a white_list instance",
			members: []Member{
				{ID: "a", Sub: wildcard(t, kazoo.RegPatternWhiteList, "orders-.*")},
				{ID: "b", Sub: Static("orders-eu", "t1")},
			},
			partitions: map[string][]Partition{"orders-eu": four, "t1": four},
			want: map[string]map[string][]int32{
				"a": {"orders-eu": {0, 1}},
				"b": {"orders-eu": {2, 3}, "t1": {0, 1, 2, 3}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Topics(RangeByLeader, tc.members, tc.partitions)
			if err != nil {
				t.Fatal(err)
			}
			if g := topicIDMap(got); !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("got %v, want %v", g, tc.want)
			}
			checkCover(t, tc.members, tc.partitions, got)
		})
	}
}

// checkCover checks that every partition of a topic somebody subscribes to
// is assigned exactly once, and only to a subscriber.
func checkCover(t *testing.T, members []Member, partitions map[string][]Partition, got map[string]map[string][]Partition) {
	t.Helper()
	subs := make(map[string]Subscription, len(members))
	for _, m := range members {
		subs[m.ID] = m.Sub
	}
	for topic, parts := range partitions {
		times := make(map[int32]int)
		for id, byTopic := range got {
			for _, x := range byTopic[topic] {
				if !subs[id].Includes(topic) {
					t.Errorf("%s/%d assigned to %s, which does not subscribe to %s", topic, x.ID, id, topic)
				}
				times[x.ID]++
			}
		}
		subscribed := slices.ContainsFunc(members, func(m Member) bool { return m.Sub.Includes(topic) })
		for _, x := range parts {
			if want := map[bool]int{true: 1, false: 0}[subscribed]; times[x.ID] != want {
				t.Errorf("%s/%d assigned %d times, want %d", topic, x.ID, times[x.ID], want)
			}
		}
	}
}

// TestAssignTopicsOrderIndependent: every instance lists the group in its
// own order; all must compute the same assignment.
func TestAssignTopicsOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	members := []Member{
		{ID: "a", Sub: Static("t1")},
		{ID: "b", Sub: Static("t1", "t2")},
		{ID: "c", Sub: Static("t2", "t3")},
		{ID: "d", Sub: Subscription{}},
		{ID: "e", Sub: Static("t1", "t2", "t3")},
	}
	partitions := map[string][]Partition{
		"t1": {p(0, 2), p(1, 1), p(2, 2), p(3, 1), p(4, 1)},
		"t2": {p(0, 1), p(1, 1), p(2, 1)},
		"t3": {p(0, 1), p(1, 2), p(2, 3), p(3, 1), p(4, 2), p(5, 3), p(6, 1)},
	}
	want, err := Topics(RangeByLeader, members, partitions)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, members, partitions, want)
	for range 100 {
		shuffled := slices.Clone(members)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffledParts := make(map[string][]Partition, len(partitions))
		for topic, ps := range partitions {
			ps = slices.Clone(ps)
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			shuffledParts[topic] = ps
		}
		got, err := Topics(RangeByLeader, shuffled, shuffledParts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v: got %v, want %v", shuffled, topicIDMap(got), topicIDMap(want))
		}
	}
}

func TestAssignTopicsUnknownStrategy(t *testing.T) {
	_, err := Topics("nope", []Member{{ID: "a", Sub: Static("t1")}}, map[string][]Partition{"t1": {p(0, 1)}})
	if !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("err = %v, want ErrUnknownStrategy", err)
	}
}
