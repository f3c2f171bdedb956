package integration

import (
	"regexp"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

func joinPattern(t testing.TB, group, pattern string) *consumergroup.ConsumerGroup {
	t.Helper()
	cg, err := consumergroup.JoinConsumerGroupPattern(group, pattern, []string{testenv.ZKAddr()}, testConfig())
	if err != nil {
		t.Fatalf("join %s with pattern %q: %v", group, pattern, err)
	}
	return cg
}

// TestIntegrationPatternPicksUpNewTopic: an instance joined with a pattern
// consumes the matching topics that exist, registers as Kafka registered a
// whitelist, and takes up a matching topic created after it joined. A topic
// that does not match is never consumed.
func TestIntegrationPatternPicksUpNewTopic(t *testing.T) {
	testenv.Integration(t)
	prefix := testenv.UniqueName("pat")
	pattern := regexp.QuoteMeta(prefix) + `\..*`
	before, other, later := prefix+".a", prefix+"-b", prefix+".c"
	testenv.CreateTopic(t, before, 2)
	testenv.CreateTopic(t, other, 2)
	countsBefore, countsOther := produce(t, before, 20), produce(t, other, 10)

	group := testenv.UniqueName("g")
	state := newGroupState(t, group)
	l := newLedger()
	hBefore := recordDeliveries(t, group, before, 2, l)
	hLater := recordDeliveries(t, group, later, 3, l) // the topic does not exist yet
	cg := joinPattern(t, group, pattern)
	done := consume(t, 0, cg, l)
	defer func() { closeGroup(t, cg); <-done }()
	waitFor(t, 20*time.Second, "every message of the matching topic", func() bool { return l.missing(before, countsBefore) == 0 })

	// The registration is Kafka's whitelist registration.
	ids := state.instances()
	if len(ids) != 1 {
		t.Fatalf("instances %v, want one", ids)
	}
	reg, err := state.cg.Instance(ids[0]).Registration()
	if err != nil {
		t.Fatal(err)
	}
	if reg.Pattern != kazoo.RegPatternWhiteList || reg.Version != 1 || len(reg.Subscription) != 1 || reg.Subscription[pattern] != 1 ||
		time.Since(time.Unix(reg.Timestamp, 0)) > time.Minute {
		t.Fatalf("registration %+v, want pattern white_list, subscription {%q: 1}, version 1, a current timestamp", reg, pattern)
	}

	// A matching topic created now is taken up.
	created := time.Now()
	testenv.CreateTopic(t, later, 3)
	leaders := time.Since(created)
	waitFor(t, 20*time.Second, "the new topic's partitions claimed", func() bool {
		return len(state.owners(later, 3)) == 3
	})
	claimed := time.Since(created)
	kz := state.kz
	waitOffsets(t, kz, group, later, 3, map[int32]int64{0: 0, 1: 0, 2: 0}, 20*time.Second)
	started := time.Since(created)
	sent := time.Now()
	countsLater := produce(t, later, 30)
	waitFor(t, 20*time.Second, "every message of the new topic", func() bool { return l.missing(later, countsLater) == 0 })
	t.Logf("new topic %s: leaders elected %v after the create request, all 3 partitions claimed after %v, their start offsets stored after %v; 30 messages produced and delivered in %v",
		later, leaders.Round(time.Millisecond), claimed.Round(time.Millisecond), started.Round(time.Millisecond), time.Since(sent).Round(time.Millisecond))

	if missing := l.missing(other, countsOther); missing != 10 {
		t.Fatalf("%d messages of %s, which the pattern does not match, were delivered", 10-missing, other)
	}
	if got := state.owners(other, 2); len(got) != 0 {
		t.Fatalf("partitions of %s claimed: %v", other, got)
	}
	hBefore.assert(expectation{produced: countsBefore, live: ids, within: time.Minute})
	hLater.assert(expectation{produced: countsLater, live: ids, within: time.Minute})
}

// TestIntegrationPatternAndStaticShareTopic: an instance with a topic list
// and an instance with a pattern in one group divide the topic both cover,
// and everything produced is consumed, nothing twice.
func TestIntegrationPatternAndStaticShareTopic(t *testing.T) {
	testenv.Integration(t)
	const partitions = 4
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	state := newGroupState(t, group)
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)

	static := join(t, group, []string{topic}, nil)
	doneS := consume(t, 0, static, l)
	defer func() { closeGroup(t, static); <-doneS }()
	pattern := joinPattern(t, group, regexp.QuoteMeta(topic[:len(topic)-3])+".*") // matches topic
	doneP := consume(t, 1, pattern, l)
	defer func() { closeGroup(t, pattern); <-doneP }()

	waitFor(t, 20*time.Second, "the topic owned two and two", func() bool {
		per := make(map[string]int)
		for _, id := range state.owners(topic, partitions) {
			per[id]++
		}
		for _, n := range per {
			if n != 2 {
				return false
			}
		}
		return len(per) == 2
	})
	counts := produce(t, topic, 400)
	waitFor(t, 30*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
	byConsumer := make(map[int]int)
	for _, d := range l.snapshot() {
		byConsumer[d.consumer]++
	}
	t.Logf("deliveries: static %d, pattern %d, duplicates %d", byConsumer[0], byConsumer[1], l.duplicates())
	if byConsumer[0] == 0 || byConsumer[1] == 0 {
		t.Error("an instance consumed nothing")
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d messages delivered twice with a settled assignment", d)
	}
	if rep := h.assert(expectation{produced: counts, liveCount: 2, within: time.Minute}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v) with a settled assignment", rep.dups, rep.dupsBy)
	}
}
