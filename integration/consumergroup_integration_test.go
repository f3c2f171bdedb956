package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Upstream's integration scenarios, on the real stack.

func TestIntegrationMultipleTopicsSingleConsumer(t *testing.T) {
	testenv.Integration(t)
	single, multi := newTopic(t, 1), newTopic(t, 4)
	c1 := produce(t, single, 100)
	c4 := produce(t, multi, 200)

	group := testenv.UniqueName("g")
	l := newLedger()
	hSingle := recordDeliveries(t, group, single, 1, l)
	hMulti := recordDeliveries(t, group, multi, 4, l)
	cg := join(t, group, []string{single, multi}, nil)
	done := consume(t, 1, cg, l)
	waitFor(t, 60*time.Second, "300 messages", func() bool { return l.distinct() >= 300 })
	closeGroup(t, cg)
	<-done

	if m := l.missing(single, c1) + l.missing(multi, c4); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries", d)
	}
	assertInOrder(t, l)
	hSingle.assert(expectation{produced: c1})
	hMulti.assert(expectation{produced: c4})
}

func TestIntegrationSingleTopicParallelConsumers(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 4)
	group := testenv.UniqueName("g")

	l := newLedger()
	h := recordDeliveries(t, group, topic, 4, l)
	cg1 := join(t, group, []string{topic}, nil)
	cg2 := join(t, group, []string{topic}, nil)
	// The topic is filled once both own their share: produced before, the
	// first to join could read all 200 before the second's join moved
	// anything.
	state := newGroupState(t, group)
	waitFor(t, 30*time.Second, "both instances owning partitions", func() bool {
		owners := state.owners(topic, 4)
		distinct := map[string]bool{}
		for _, o := range owners {
			distinct[o] = true
		}
		return len(owners) == 4 && len(distinct) == 2
	})
	counts := produce(t, topic, 200)
	d1, d2 := consume(t, 1, cg1, l), consume(t, 2, cg2, l)
	waitFor(t, 60*time.Second, "200 messages", func() bool { return l.distinct() >= 200 })
	closeGroup(t, cg1)
	closeGroup(t, cg2)
	<-d1
	<-d2

	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	per := map[int]int{}
	for _, d := range l.all {
		per[d.consumer]++
	}
	if per[1] == 0 || per[2] == 0 {
		t.Errorf("expected both consumers to get messages, got %v", per)
	}
	assertInOrder(t, l)
	t.Logf("deliveries per consumer: %v, duplicates %d", per, l.duplicates())
	h.assert(expectation{produced: counts})
}

func TestIntegrationConsumerLeavesMidStream(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 4)
	counts := produce(t, topic, 2000)
	group := testenv.UniqueName("g")

	l := newLedger()
	h := recordDeliveries(t, group, topic, 4, l)
	cg1 := join(t, group, []string{topic}, nil)
	cg2 := join(t, group, []string{topic}, nil)
	d1, d2 := consume(t, 1, cg1, l), consume(t, 2, cg2, l)
	waitFor(t, 60*time.Second, "some messages", func() bool { return l.distinct() >= 300 })
	closeGroup(t, cg1) // leaves mid-stream
	<-d1
	waitFor(t, 60*time.Second, "the whole topic", func() bool { return l.distinct() >= 2000 })
	closeGroup(t, cg2)
	<-d2

	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries (the leaving consumer marked everything it got)", d)
	}
	if rep := h.assert(expectation{produced: counts}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v)", rep.dups, rep.dupsBy)
	}
}

func TestIntegrationOffsetsResumedAfterRestart(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	counts := produce(t, topic, 20)
	group := testenv.UniqueName("g")
	h := newHistory(t, group, topic, 1)

	// The first consumer processes exactly 10 messages, then closes.
	cg1 := join(t, group, []string{topic}, nil)
	for i := 0; i < 10; i++ {
		select {
		case m := <-cg1.Messages():
			if m.Offset != int64(i) {
				t.Fatalf("first consumer: got offset %d, want %d", m.Offset, i)
			}
			h.delivered(1, m)
			_ = cg1.CommitUpto(m)
		case <-time.After(30 * time.Second):
			t.Fatal("first consumer: timeout")
		}
	}
	closeGroup(t, cg1)

	kz := zkClient(t)
	if off, err := kz.Consumergroup(group).FetchOffset(topic, 0); err != nil || off != 10 {
		t.Fatalf("stored offset after close = %d, %v; want 10", off, err)
	}

	// The second resumes at 10 and gets the rest, nothing lost.
	cg2 := join(t, group, []string{topic}, nil)
	defer closeGroup(t, cg2)
	for i := 10; i < int(counts[0]); i++ {
		select {
		case m := <-cg2.Messages():
			if m.Offset != int64(i) {
				t.Fatalf("second consumer: got offset %d, want %d", m.Offset, i)
			}
			h.delivered(2, m)
			_ = cg2.CommitUpto(m)
		case <-time.After(30 * time.Second):
			t.Fatal("second consumer: timeout")
		}
	}
	if rep := h.assert(expectation{produced: counts}); rep.dups != 0 || rep.handoffs != 1 {
		t.Errorf("history: %d duplicates, %d handoffs; want none and one (from the first consumer to the second)", rep.dups, rep.handoffs)
	}
}

// assertInOrder checks that each consumer saw each partition's offsets in
// increasing order.
func assertInOrder(t *testing.T, l *ledger) {
	t.Helper()
	type key struct {
		consumer  int
		topic     string
		partition int32
	}
	last := map[key]int64{}
	for _, d := range l.all {
		k := key{d.consumer, d.topic, d.partition}
		if prev, ok := last[k]; ok && d.offset <= prev {
			t.Errorf("consumer %d: %s/%d offset %d after %d", d.consumer, d.topic, d.partition, d.offset, prev)
		}
		last[k] = d.offset
	}
}
