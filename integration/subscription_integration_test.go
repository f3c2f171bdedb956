package integration

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationDifferentSubscriptions: two instances of one group consume
// different topic lists, a = {t1} and b = {t1, t2}. Each topic is divided
// between the instances that subscribe to it, so b owns every partition of
// t2 and the two share t1. Everything produced to both topics is consumed,
// and nothing of t2 reaches a.
func TestIntegrationDifferentSubscriptions(t *testing.T) {
	testenv.Integration(t)
	const partitions = 4
	t1, t2 := newTopic(t, partitions), newTopic(t, partitions)
	counts1, counts2 := produce(t, t1, 400), produce(t, t2, 400)
	group := testenv.UniqueName("g")
	state := newGroupState(t, group)
	l := newLedger()

	a := join(t, group, []string{t1}, nil)
	doneA := consume(t, 0, a, l)
	defer func() { closeGroup(t, a); <-doneA }()
	b := join(t, group, []string{t1, t2}, nil)
	doneB := consume(t, 1, b, l)
	defer func() { closeGroup(t, b); <-doneB }()

	var missing1, missing2 int
	defer func() {
		if t.Failed() {
			t.Logf("never delivered: %d of %s, %d of %s", missing1, t1, missing2, t2)
		}
	}()
	waitFor(t, 30*time.Second, "every message of both topics", func() bool {
		missing1, missing2 = l.missing(t1, counts1), l.missing(t2, counts2)
		return missing1 == 0 && missing2 == 0
	})

	// The final ownership: t1 split two and two, t2 all b's.
	var idA, idB string
	waitFor(t, 20*time.Second, "both instances registered", func() bool {
		list, err := state.cg.Instances()
		if err != nil || len(list) != 2 {
			return false
		}
		for _, i := range list {
			reg, err := i.Registration()
			if err != nil {
				return false
			}
			switch topics := slices.Sorted(maps.Keys(reg.Subscription)); {
			case slices.Equal(topics, []string{t1}):
				idA = i.ID
			case len(topics) == 2:
				idB = i.ID
			}
		}
		return idA != "" && idB != ""
	})
	perOwner := func(topic string) map[string]int {
		out := make(map[string]int)
		for _, id := range state.owners(topic, partitions) {
			out[id]++
		}
		return out
	}
	waitFor(t, 20*time.Second, "t1 owned two and two, t2 owned by b alone", func() bool {
		o1, o2 := perOwner(t1), perOwner(t2)
		return o1[idA] == 2 && o1[idB] == 2 && o2[idB] == partitions && len(o2) == 1
	})

	l.mu.Lock()
	defer l.mu.Unlock()
	var wrong []string
	for _, d := range l.all {
		if d.topic == t2 && d.consumer == 0 {
			wrong = append(wrong, fmt.Sprintf("%d/%d", d.partition, d.offset))
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("a, which does not subscribe to %s, delivered %d of its messages: %v", t2, len(wrong), wrong[:min(len(wrong), 10)])
	}
}
