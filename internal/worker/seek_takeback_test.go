package worker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// fakeSession is a ZooKeeper session that stays connected as id.
type fakeSession struct{ id int64 }

func (s fakeSession) Session() (kazoo.Session, <-chan struct{}) {
	return kazoo.Session{Status: kazoo.SessionConnected, ID: s.id}, nil
}
func (s fakeSession) SessionID() int64              { return s.id }
func (s fakeSession) SessionTimeout() time.Duration { return 6 * time.Second }

// consumingWorker is a worker in state consuming away from pump, with a
// buffered output, listening to its gate as run does, tracked from 0.
func consumingWorker(t *testing.T, capacity int) (*Worker, *fence.Gate, *offsets.Partition) {
	t.Helper()
	gate := fence.NewGate()
	w := newTestWorker(Deps{Session: fakeSession{id: 7}, Gate: gate})
	t.Cleanup(w.cancel)
	w.out = make(chan *sarama.ConsumerMessage, capacity)
	owned := adoptAt(w, testClaim(7), 0)
	w.owned = owned
	w.takeBackFrom = owned // as consume sets it
	t.Cleanup(gate.Listen(w.onGatePause))
	return w, gate, owned
}

// handOut delivers the given offsets into w's buffer, as pump does.
func handOut(w *Worker, owned *offsets.Partition, offs ...int64) {
	for _, o := range offs {
		m := &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o}
		owned.Offer(o)
		owned.OfferMessage(m)
		w.out <- m
		owned.Delivered(o)
	}
}

// A take-back outside pump leaves its lowest offset for the pause it posts
// again; a seek posted beside it (the committer adopted an offset stored
// underneath) is taken first, most urgent. The seek's restart supersedes
// what was taken back before it: the old worker restarted below the
// take-back before pump, then took the seek, and fetched from the stored
// offset. The pause taken after the seek must not move the partition back
// below the adopted offset, to messages someone else stored as processed.
func TestSeekBesideTakeBackOutsidePumpEndsAtTheStoredOffset(t *testing.T) {
	w, gate, owned := consumingWorker(t, 8)
	handOut(w, owned, 0, 1, 2, 3)
	m0 := <-w.out
	if !owned.Mark(m0, m0.Offset) {
		t.Fatal("mark of 0 refused")
	}
	gate.Set(true) // fenced off away from pump: 1, 2, 3 taken back at once
	defer gate.Set(false)
	if n := len(w.out); n != 0 {
		t.Fatalf("buffer holds %d messages after the take-back outside pump", n)
	}
	owned.SetSeeking() // as the committer's conflict does before it tells the owner
	w.CommitResult(offsets.CommitResult{Moved: true, Stored: 10})

	// consume takes every message before its next pump.
	start := int64(0)
	for w.inbox.Pending() {
		_, resume, ended, ok := w.takeLocked(start)
		if ok && ended {
			t.Fatal("consuming ended")
		}
		if ok {
			start = resume
		}
	}
	if start != 10 {
		t.Errorf("the fetch restarts at %d, want the adopted stored offset 10", start)
	}
	if next, _ := owned.Tracker.Pending(); next != 10 {
		t.Errorf("position %d, want the adopted stored offset 10", next)
	}
}
