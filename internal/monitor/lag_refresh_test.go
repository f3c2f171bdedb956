package monitor

import (
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

var (
	b1 = Broker{ID: 1, Addr: "b1:9092"}
	b2 = Broker{ID: 2, Addr: "b2:9092"}
)

func tp(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }

// owned returns the owned partitions 0..n-1, each committed up to 10.
func owned(n int32) []Partition {
	var out []Partition
	for p := range n {
		out = append(out, Partition{TP: tp(p), Offsets: &fakeOffsets{committed: 10}})
	}
	return out
}

// runRound runs one refresh round over k, setting g.
func runRound(t *testing.T, k *fakeKafka, g *fakeGauges) {
	t.Helper()
	r := &lagRefresh{owned: k, leaders: k, offsets: k, gauges: g, log: discardLog}
	r.round(t.Context())
}

// Each leader gets one request for all the owned partitions it leads,
// and each partition it answers for gets its lag.
func TestLagRoundOneRequestPerLeader(t *testing.T) {
	k := &fakeKafka{
		owned:   owned(3),
		leaders: map[TopicPartition]Broker{tp(0): b1, tp(1): b2, tp(2): b1},
		hwms:    map[TopicPartition]int64{tp(0): 15, tp(1): 12, tp(2): 30},
	}
	g := newFakeGauges()
	runRound(t, k, g)

	got := k.sent()
	if len(got) != 2 {
		t.Fatalf("%d ListOffsets requests, want 2 (one per leader): %v", len(got), got)
	}
	byBroker := map[Broker][]TopicPartition{got[0].broker: got[0].tps, got[1].broker: got[1].tps}
	if want := []TopicPartition{tp(0), tp(2)}; !slices.Equal(byBroker[b1], want) {
		t.Errorf("broker 1 asked for %v, want %v", byBroker[b1], want)
	}
	if want := []TopicPartition{tp(1)}; !slices.Equal(byBroker[b2], want) {
		t.Errorf("broker 2 asked for %v, want %v", byBroker[b2], want)
	}
	if want := map[TopicPartition]int64{tp(0): 5, tp(1): 2, tp(2): 20}; !maps.Equal(g.lagSet(), want) {
		t.Errorf("lags %v, want %v", g.lagSet(), want)
	}
}

// A partition without a leader, one its leader leaves out of the answer,
// and those of a leader whose request fails keep their gauges; the others
// are set. A partition without a committed offset records the high-water
// mark but gets no gauge.
func TestLagRoundSkipsWhatCannotBeAsked(t *testing.T) {
	parts := owned(5)
	parts[4].Offsets.(*fakeOffsets).committed = -1
	k := &fakeKafka{
		owned:   parts,
		leaders: map[TopicPartition]Broker{tp(1): b1, tp(2): b1, tp(3): b2, tp(4): b1}, // tp(0): none
		hwms:    map[TopicPartition]int64{tp(1): 11, tp(3): 13, tp(4): 14},             // tp(2): left out
		failing: map[Broker]bool{b2: true},
	}
	g := newFakeGauges()
	runRound(t, k, g)

	if want := map[TopicPartition]int64{tp(1): 1}; !maps.Equal(g.lagSet(), want) {
		t.Errorf("lags %v, want %v", g.lagSet(), want)
	}
	if got := parts[4].Offsets.(*fakeOffsets).seen(); got != 14 {
		t.Errorf("partition without a committed offset saw high-water mark %d, want 14", got)
	}
}

// Nothing is sent while nothing is owned.
func TestLagRoundOwningNothingSendsNothing(t *testing.T) {
	k := &fakeKafka{}
	runRound(t, k, newFakeGauges())
	if got := k.sent(); len(got) != 0 {
		t.Errorf("%d ListOffsets requests owning nothing, want none", len(got))
	}
}

// The refresh runs a round every interval until Stop, and closes its
// ListOffsets at the end of each round, so nothing stays open between
// rounds.
func TestLagRefreshEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, g := newFakeSession(), newFakeGauges()
		k := &fakeKafka{owned: owned(1), leaders: map[TopicPartition]Broker{tp(0): b1}, hwms: map[TopicPartition]int64{tp(0): 12}}
		m := Start(time.Second, deps(s, g, k))
		time.Sleep(3*time.Second + time.Millisecond)
		m.Stop()
		synctest.Wait()
		if n := len(k.sent()); n != 3 {
			t.Errorf("%d rounds in 3 intervals, want 3", n)
		}
		if n := k.closes(); n != 3 {
			t.Errorf("ListOffsets closed %d times in 3 rounds, want 3 (one at the end of each)", n)
		}
		time.Sleep(10 * time.Second)
		if n := len(k.sent()); n != 3 {
			t.Errorf("%d rounds after Stop, want none", n-3)
		}
		s.set(kazoo.SessionClosed, 1)
		m.AwaitSessionWatch()
	})
}
