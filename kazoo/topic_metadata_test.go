package kazoo

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

const testPath = "/chroot/brokers/topics/t"

// Written by Kafka 3.9 for a topic with four partitions.
const kafkaAssignment = `{"partitions":{"0":[1],"1":[1],"2":[1],"3":[1]},"topic_id":"o1kPxTCgSdSwsK7HGfwFeA","adding_replicas":{},"removing_replicas":{},"version":3}`

func TestParsePartitionMap(t *testing.T) {
	tests := []struct {
		name string
		data string
		want [][]int32
		is   error // besides ErrMalformed
	}{
		{"kafka 3.9", kafkaAssignment, [][]int32{{1}, {1}, {1}, {1}}, nil},
		{"kazoo-go", `{"version":1,"partitions":{"1":[2,3],"0":[3,1]}}`, [][]int32{{3, 1}, {2, 3}}, nil},
		{"whitespace", " {\"partitions\" : { \"0\" : [ 5 , 6 ] } } ", [][]int32{{5, 6}}, nil},
		{"reassignment keeps uneven replica counts", `{"partitions":{"0":[1,2,3],"1":[2]}}`, [][]int32{{1, 2, 3}, {2}}, nil},

		{"empty data", ``, nil, nil},
		{"not json", `{partitions`, nil, nil},
		{"json null", `null`, nil, ErrInvalidPartitionCount},
		{"array", `[1,2]`, nil, nil},
		{"string", `"x"`, nil, nil},
		{"no partitions", `{"version":1}`, nil, ErrInvalidPartitionCount},
		{"partitions null", `{"partitions":null}`, nil, ErrInvalidPartitionCount},
		{"partitions empty", `{"partitions":{}}`, nil, ErrInvalidPartitionCount},
		{"partitions array", `{"partitions":[[1]]}`, nil, nil},
		{"partitions number", `{"partitions":3}`, nil, nil},
		{"non-numeric id", `{"partitions":{"zero":[1]}}`, nil, nil},
		{"empty id", `{"partitions":{"":[1]}}`, nil, nil},
		{"plus sign", `{"partitions":{"+0":[1]}}`, nil, nil},
		{"leading zero", `{"partitions":{"0":[1],"01":[1]}}`, nil, nil},
		{"id overflows int32", `{"partitions":{"2147483648":[1]}}`, nil, nil},
		{"negative id", `{"partitions":{"-1":[1],"0":[1]}}`, nil, nil},
		{"gap", `{"partitions":{"0":[1],"2":[1]}}`, nil, ErrMissingPartitionID},
		{"not from zero", `{"partitions":{"1":[1]}}`, nil, ErrMissingPartitionID},
		{"huge id", `{"partitions":{"2147483647":[1]}}`, nil, ErrMissingPartitionID},
		{"duplicate key", `{"partitions":{"0":[1],"0":[2]}}`, nil, ErrDuplicatePartitionID},
		{"empty replicas", `{"partitions":{"0":[]}}`, nil, ErrInvalidReplicationFactor},
		{"null replicas", `{"partitions":{"0":null}}`, nil, ErrInvalidReplicationFactor},
		{"negative replica", `{"partitions":{"0":[1,-2]}}`, nil, ErrInvalidBroker},
		{"repeated replica", `{"partitions":{"0":[1,1]}}`, nil, ErrReplicaBrokerOverlap},
		{"replica not int", `{"partitions":{"0":["1"]}}`, nil, nil},
		{"replica fraction", `{"partitions":{"0":[1.5]}}`, nil, nil},
		{"replica overflow", `{"partitions":{"0":[4294967296]}}`, nil, nil},
		{"replicas object", `{"partitions":{"0":{"a":1}}}`, nil, nil},
		{"trailing garbage", `{"partitions":{"0":[1]}} x`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePartitionMap(testPath, []byte(tt.data))
			if tt.want != nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				return
			}
			assertMalformed(t, err, testPath)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %q", err, tt.is)
			}
		})
	}
}

func assertMalformed(t *testing.T, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatal("got no error, want one wrapping ErrMalformed")
	}
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("error %q does not wrap ErrMalformed", err)
	}
	var ze *ZnodeError
	if !errors.As(err, &ze) || ze.Path != path {
		t.Errorf("error %q is not a *ZnodeError for %s", err, path)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestMarshalPartitionMapRoundTrip(t *testing.T) {
	in := [][]int32{{1, 2}, {2, 3}, {3, 1}}
	data, err := marshalPartitionMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"version":1`) {
		t.Errorf("no version in %s", data)
	}
	out, err := parsePartitionMap(testPath, data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v became %v", in, out)
	}
}

func TestParsePartitionState(t *testing.T) {
	const p = "/brokers/topics/t/partitions/0/state"
	tests := []struct {
		name string
		data string
		want *PartitionState
	}{
		{"kafka 3.9", `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}`,
			&PartitionState{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}},
		{"no leader", `{"controller_epoch":7,"leader":-1,"version":1,"leader_epoch":3,"isr":[2]}`,
			&PartitionState{Leader: -1, LeaderEpoch: 3, ISR: []int32{2}, ControllerEpoch: 7}},
		{"empty isr", `{"leader":-1,"isr":[]}`, &PartitionState{Leader: -1, ISR: []int32{}}},
		{"extra fields", `{"leader":3,"isr":[3,1],"leader_recovery_state":0}`, &PartitionState{Leader: 3, ISR: []int32{3, 1}}},

		{"empty data", ``, nil},
		{"not json", `{"leader":`, nil},
		{"null", `null`, nil},
		{"array", `[1]`, nil},
		{"missing leader", `{"isr":[1]}`, nil},
		{"null leader", `{"leader":null,"isr":[1]}`, nil},
		{"leader string", `{"leader":"1","isr":[1]}`, nil},
		{"leader below -1", `{"leader":-2,"isr":[1]}`, nil},
		{"leader overflow", `{"leader":2147483648,"isr":[1]}`, nil},
		{"missing isr", `{"leader":1}`, nil},
		{"null isr", `{"leader":1,"isr":null}`, nil},
		{"isr not array", `{"leader":1,"isr":1}`, nil},
		{"negative isr", `{"leader":1,"isr":[1,-1]}`, nil},
		{"repeated isr", `{"leader":1,"isr":[1,1]}`, nil},
		{"epoch string", `{"leader":1,"isr":[1],"leader_epoch":"x"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePartitionState(p, []byte(tt.data))
			if tt.want == nil {
				assertMalformed(t, err, p)
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseTopicConfig(t *testing.T) {
	const p = "/config/topics/t"
	tests := []struct {
		name string
		data string
		want map[string]string
	}{
		{"empty config", `{"version":1,"config":{}}`, map[string]string{}},
		{"overrides", `{"version":1,"config":{"retention.ms":"604800000","cleanup.policy":"compact"}}`,
			map[string]string{"retention.ms": "604800000", "cleanup.policy": "compact"}},
		{"no config field", `{"version":1}`, map[string]string{}},
		{"null config", `{"config":null}`, map[string]string{}},

		{"empty data", ``, nil},
		{"not json", `{"config"`, nil},
		{"array", `[]`, nil},
		{"config array", `{"config":["a"]}`, nil},
		{"number value", `{"config":{"retention.ms":604800000}}`, nil},
		{"nested value", `{"config":{"a":{"b":"c"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTopicConfig(p, []byte(tt.data))
			if tt.want == nil {
				assertMalformed(t, err, p)
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got == nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestValidateTopicName(t *testing.T) {
	valid := []string{"a", "zkgroup.test.four", "A-b_c.9", "...", "..a", strings.Repeat("x", MaxTopicNameLength), "__consumer_offsets"}
	for _, name := range valid {
		if err := ValidateTopicName(name); err != nil {
			t.Errorf("ValidateTopicName(%q) = %v, want nil", name, err)
		}
	}
	invalid := []string{"", ".", "..", strings.Repeat("x", MaxTopicNameLength+1), "a/b", "../ids", "a b", "é", "a\x00", "tab\t", "a:b", "a*"}
	for _, name := range invalid {
		err := ValidateTopicName(name)
		if !errors.Is(err, ErrInvalidTopicName) {
			t.Errorf("ValidateTopicName(%q) = %v, want ErrInvalidTopicName", name, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("error %q does not quote the name %q", err, name)
		}
	}
}

func TestTopicNamesCollide(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"a.b", "a_b", true},
		{"a_b", "a.b", true},
		{"a.b_c", "a_b.c", true},
		{"a.b", "a.b", false}, // the same topic, not a collision
		{"a.b", "a-b", false},
		{"ab", "a_b", false},
	}
	for _, tt := range tests {
		if got := topicNamesCollide(tt.a, tt.b); got != tt.want {
			t.Errorf("topicNamesCollide(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestAssignReplicas(t *testing.T) {
	for _, tc := range []struct {
		brokers        []int32
		partitions, rf int
	}{
		{[]int32{1}, 1, 1},
		{[]int32{1}, 8, 1},
		{[]int32{1, 2, 3}, 12, 2},
		{[]int32{1, 2, 3}, 7, 3},
		{[]int32{4, 7, 9, 12, 20}, 50, 3},
	} {
		n := len(tc.brokers)
		for start := range n {
			for shift := range n {
				a := assignReplicas(tc.brokers, tc.partitions, tc.rf, start, shift)
				if len(a) != tc.partitions {
					t.Fatalf("%d partitions, want %d", len(a), tc.partitions)
				}
				leaders := map[int32]int{}
				for p, r := range a {
					if len(r) != tc.rf {
						t.Fatalf("partition %d has %d replicas, want %d", p, len(r), tc.rf)
					}
					if err := checkBrokerIDs(r); err != nil {
						t.Fatalf("partition %d: %v (%v)", p, err, r)
					}
					for _, id := range r {
						if !slices.Contains(tc.brokers, id) {
							t.Fatalf("partition %d assigned to unknown broker %d", p, id)
						}
					}
					leaders[r[0]]++
				}
				// Leaders are spread evenly: counts differ by at most one.
				lo, hi := tc.partitions, 0
				for _, b := range tc.brokers {
					lo, hi = min(lo, leaders[b]), max(hi, leaders[b])
				}
				if hi-lo > 1 {
					t.Errorf("brokers %v, start %d: uneven leaders %v", tc.brokers, start, leaders)
				}
			}
		}
	}
	// Kafka's own example: 5 brokers, 10 partitions, 3 replicas, start 0, shift 0.
	got := assignReplicas([]int32{0, 1, 2, 3, 4}, 10, 3, 0, 0)
	want := [][]int32{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1}, {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPartitionAccessors(t *testing.T) {
	kz := &Kazoo{conf: NewConfig()}
	topic := kz.Topic("orders")
	p := topic.Partition(3, []int32{5, 1})
	if p.Topic() != topic {
		t.Error("Topic() is not the topic the partition came from")
	}
	if got := p.Key(); got != "orders/3" {
		t.Errorf("Key() = %q", got)
	}
	if got := p.PreferredReplica(); got != 5 {
		t.Errorf("PreferredReplica() = %d, want 5", got)
	}
	if got := topic.Partition(0, nil).PreferredReplica(); got != -1 {
		t.Errorf("PreferredReplica() without replicas = %d, want -1", got)
	}
	var zero Partition
	if got := zero.Key(); got != "/0" {
		t.Errorf("zero Partition Key() = %q", got)
	}
}

func TestTopicHandleWithoutKazoo(t *testing.T) {
	// A Topic built by hand has no connection: methods fail instead of
	// panicking.
	topic := &Topic{Name: "orders"}
	if _, err := topic.Exists(); err == nil {
		t.Error("Exists on a hand-made Topic: no error")
	}
	if _, err := topic.Partitions(); err == nil {
		t.Error("Partitions on a hand-made Topic: no error")
	}
	if _, err := topic.Partition(0, []int32{1}).Leader(); err == nil {
		t.Error("Leader on a hand-made Topic: no error")
	}
	var zero Partition
	if _, err := zero.State(); err == nil {
		t.Error("State of a zero Partition: no error")
	}
}

func TestTopicListAndPartitionListSort(t *testing.T) {
	kz := &Kazoo{conf: NewConfig()}
	tl := TopicList{kz.Topic("c"), kz.Topic("a"), kz.Topic("b")}
	sort.Sort(tl)
	if tl[0].Name != "a" || tl[1].Name != "b" || tl[2].Name != "c" {
		t.Errorf("sorted topics: %v %v %v", tl[0].Name, tl[1].Name, tl[2].Name)
	}
	if tl.Find("b") != tl[1] || tl.Find("x") != nil {
		t.Error("Find")
	}
	a, b := kz.Topic("a"), kz.Topic("b")
	pl := PartitionList{b.Partition(0, nil), a.Partition(2, nil), a.Partition(1, nil)}
	sort.Sort(pl)
	var keys []string
	for _, p := range pl {
		keys = append(keys, p.Key())
	}
	if want := []string{"a/1", "a/2", "b/0"}; !slices.Equal(keys, want) {
		t.Errorf("sorted partitions %v, want %v", keys, want)
	}
}
