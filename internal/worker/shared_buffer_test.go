package worker

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// sharedWorker is a worker of t/partition in state consuming away from
// pump, sending through the shared buffer o as consumePartition sets it
// up, tracked from 0, with its own committer; listening to gate when it
// is not nil.
func sharedWorker(t *testing.T, o *Outbox, partition int32, gate *fence.Gate) (*Worker, *offsets.Partition) {
	t.Helper()
	deps := Deps{Session: fakeSession{id: 7}}
	if gate != nil {
		deps.Gate = gate
	}
	w := newTestWorkerFor(deps, TopicPartition{Topic: "t", Partition: partition})
	t.Cleanup(w.cancel)
	c := &kazoo.PartitionClaim{Topic: "t", Partition: partition, InstanceID: "i", SessionID: 7}
	owned := adoptAt(w, c, 0)
	w.owned = owned
	w.takeBackFrom = owned
	w.out = o.C()
	w.outbox = o.Register(w.tp, sharedRecall{w, owned})
	if gate != nil {
		t.Cleanup(gate.Listen(w.onGatePause))
	}
	return w, owned
}

// handOutShared delivers the given offsets of w's partition into the
// shared buffer, as pump does.
func handOutShared(w *Worker, owned *offsets.Partition, offs ...int64) {
	for _, off := range offs {
		m := &sarama.ConsumerMessage{Topic: w.tp.Topic, Partition: w.tp.Partition, Offset: off}
		owned.Offer(off)
		owned.OfferMessage(m)
		if !w.outbox.TrySend(m) {
			panic("shared buffer full")
		}
		owned.Delivered(off)
	}
}

func readAll(ch chan *sarama.ConsumerMessage) []string {
	var got []string
	for len(ch) > 0 {
		m := <-ch
		got = append(got, fmt.Sprintf("%d/%d", m.Partition, m.Offset))
	}
	return got
}

// Fenced off away from pump, a worker takes back everything the shared
// buffer holds at once, for every partition: each of them takes the
// gate's pause, and none of their messages waits in the channel for a
// partition that has yet to. Its own position is capped below the lowest
// offset it took back; the other partition is told, capped below its own,
// and restarts there when it takes the pause.
func TestGatePauseTakesBackTheWholeSharedBuffer(t *testing.T) {
	gate := fence.NewGate()
	o := NewOutbox(8)
	a, ownedA := sharedWorker(t, o, 0, gate)
	b, ownedB := sharedWorker(t, o, 1, nil) // not listening: it has yet to take the pause
	handOutShared(a, ownedA, 0)
	handOutShared(b, ownedB, 0)
	handOutShared(a, ownedA, 1, 2)
	handOutShared(b, ownedB, 1)
	if m := <-o.C(); !ownedA.Mark(m, m.Offset) {
		t.Fatal("mark of 0/0 refused")
	}
	gate.Set(true)
	defer gate.Set(false)
	if got := readAll(o.C()); len(got) != 0 {
		t.Fatalf("the shared buffer holds %v after the fenced take-back, want nothing", got)
	}
	if a.takenBack != 1 {
		t.Errorf("took back from %d, want 1", a.takenBack)
	}
	// A mark of a message the application cannot have got is never
	// committed: the position stays below the lowest taken back.
	ownedA.Mark(nil, 2)
	if next, _ := ownedA.Tracker.Pending(); next != 1 {
		t.Errorf("position %d, want capped at 1", next)
	}
	ownedB.Mark(nil, 1)
	if next, _ := ownedB.Tracker.Pending(); next != 0 {
		t.Errorf("partition 1's position %d, want capped at 0", next)
	}
	if !b.inbox.Pending() {
		t.Fatal("partition 1's worker was not told")
	}
	_, resume, ended, ok := b.takeLocked(2)
	if !ok || ended || resume != 0 {
		t.Fatalf("partition 1 resumes at %d (ok %v, ended %v), want a restart at 0", resume, ok, ended)
	}
}

// When a take-back by one partition's worker finds that the application
// overtook another partition's messages (it read a later one while the
// take-back held an earlier one), that partition's position is capped
// below them, and its worker, told through a pause, restarts at its mark
// below them. It keeps what was taken for its next hand-out, so the
// consumer's interceptors do not run on those messages twice.
func TestOvertakenPartitionRestartsBelowWhatWasTakenBack(t *testing.T) {
	o := NewOutbox(8)
	a, ownedA := sharedWorker(t, o, 0, nil)
	b, ownedB := sharedWorker(t, o, 1, nil)
	b.deps.HandingOut = func(*sarama.ConsumerMessage) {}
	handOutShared(b, ownedB, 0, 1, 2, 3)
	handOutShared(a, ownedA, 0)
	// The application got 1/0, then 1/2 while a take-back held 1/1: what
	// the channel holds then, and the marks it made.
	readAll(o.C())
	for _, m := range []*sarama.ConsumerMessage{
		{Topic: "t", Partition: 1, Offset: 1}, {Topic: "t", Partition: 0, Offset: 0}, {Topic: "t", Partition: 1, Offset: 3},
	} {
		o.C() <- m
	}
	ownedB.Mark(nil, 0)
	ownedB.Mark(nil, 2)

	a.handing.Lock()
	if n, lowest := a.recallCapped(ownedA); n != 1 || lowest != 0 {
		t.Fatalf("partition 0 took back %d from %d, want 1 from 0", n, lowest)
	}
	a.handing.Unlock()
	if left := readAll(o.C()); len(left) != 0 {
		t.Fatalf("the shared buffer holds %v; an overtaken partition's messages must not be put back", left)
	}
	if next, _ := ownedB.Tracker.Pending(); next != 1 {
		t.Errorf("partition 1's position %d, want capped at 1, below the message taken back", next)
	}
	if !b.inbox.Pending() {
		t.Fatal("partition 1's worker was not told")
	}
	_, resume, ended, ok := b.takeLocked(3)
	if !ok || ended || resume != 1 {
		t.Fatalf("partition 1 resumes at %d (ok %v, ended %v), want a restart at 1", resume, ok, ended)
	}
	if _, ok := b.unhanded[1]; !ok || len(b.unhanded) != 2 {
		t.Errorf("partition 1 keeps %d messages for the next hand-out, want 1/1 and 1/3", len(b.unhanded))
	}
}
