package integration

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
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
	h1 := recordDeliveries(t, group, t1, partitions, l)
	h2 := recordDeliveries(t, group, t2, partitions, l)

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

	h1.assert(expectation{produced: counts1, live: []string{idA, idB}, within: time.Minute})
	allB := make(map[int32]string)
	for _, p := range allPartitions(partitions) {
		allB[p] = idB
	}
	h2.assert(expectation{produced: counts2, live: []string{idA, idB}, want: allB, within: time.Minute})

	var wrong []string
	for _, d := range l.snapshot() {
		if d.topic == t2 && d.consumer == 0 {
			wrong = append(wrong, fmt.Sprintf("%d/%d", d.partition, d.offset))
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("a, which does not subscribe to %s, delivered %d of its messages: %v", t2, len(wrong), wrong[:min(len(wrong), 10)])
	}
}

// TestIntegrationRegistrationChanges: an instance's registration changes
// underneath while two instances share a topic. A static subscription that
// drops the topic hands its partitions to the other instance at once (the
// group watches each registration, not only the list of instances); a
// registration that cannot be read is reported once on each instance's
// Errors(), with its path, and its instance takes no partition; once it is
// fixed, the topic is shared again.
func TestIntegrationRegistrationChanges(t *testing.T) {
	testenv.Integration(t)
	const partitions = 4
	topic := newTopic(t, partitions)
	counts := produce(t, topic, 100)
	group := testenv.UniqueName("g")
	state := newGroupState(t, group)
	h := newHistory(t, group, topic, partitions)

	a := join(t, group, []string{topic}, nil)
	ca := collect(a, 1)
	defer func() { closeGroup(t, a); <-ca.done }()
	b := join(t, group, []string{topic}, nil)
	cb := collect(b, 2)
	h.attach(ca.ledger)
	h.attach(cb.ledger)
	defer func() { closeGroup(t, b); <-cb.done }()

	var ids []string
	waitFor(t, 20*time.Second, "two instances", func() bool {
		ids = state.instances()
		return len(ids) == 2
	})
	perOwner := func() map[string]int {
		out := make(map[string]int)
		for _, id := range state.owners(topic, partitions) {
			out[id]++
		}
		return out
	}
	shared := func() bool { o := perOwner(); return o[ids[0]] == 2 && o[ids[1]] == 2 }
	alone := func() bool { return perOwner()[ids[1]] == partitions }
	waitFor(t, 20*time.Second, "the topic shared two and two", shared)

	path := "/consumers/" + group + "/ids/" + ids[0]
	zkCliSet(t, path, `{"version":1,"subscription":{"elsewhere":1},"pattern":"static","timestamp":"0"}`)
	waitFor(t, 10*time.Second, "the other instance to own every partition after the first dropped the topic", alone)

	malformedReports := func(c *collector) int {
		n := 0
		for _, err := range c.errors() {
			if errors.Is(err, kazoo.ErrMalformed) && strings.Contains(err.Error(), path) {
				n++
			}
		}
		return n
	}
	zkCliSet(t, path, `{nope`)
	waitFor(t, 10*time.Second, "the unreadable registration reported by both instances", func() bool {
		return malformedReports(ca) == 1 && malformedReports(cb) == 1
	})
	zkCliSet(t, path, `{still nope`) // wakes both again; not reported again
	if !alone() {
		t.Fatalf("owners with an unreadable registration: %v, want all %s's", state.owners(topic, partitions), ids[1])
	}

	zkCliSet(t, path, `{"version":1,"subscription":{"`+topic+`":1},"pattern":"static","timestamp":"0"}`)
	waitFor(t, 10*time.Second, "the topic shared again after the fix", shared)
	if na, nb := malformedReports(ca), malformedReports(cb); na != 1 || nb != 1 {
		t.Fatalf("the unreadable registration was reported %d and %d times, want once each", na, nb)
	}
	h.assert(expectation{produced: counts, live: ids, within: time.Minute})
}
