package worker

import (
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// A partition told it was overtaken while consuming may send one more
// message (a TrySend under way through the other partition's take-back)
// and take a stop before the pause (Stop outranks Pause). Draining, its
// recall takes its own later message back and restarts at the mark below
// it, but never above the ceiling the notice set: the application marked
// 1/2 (which it got beside the take-back), and the final commit must stay
// below 1/1, which it never got.
func TestOvertakenThenStoppedBeforeThePauseCommitsBelowWhatWasTaken(t *testing.T) {
	_, b := overtakeB(t, nil) // b told: ceiling 1; 1/0 and 1/2 marked (next 3)
	ownedB := b.owned
	handOutShared(b, ownedB, 4) // the send that waited out the take-back
	b.inbox.Stop()
	e, _, ended, ok := b.takeLocked(3)
	if !ok || !ended || e != Stop {
		t.Fatalf("took %v ended %v ok %v, want the stop first", e, ended, ok)
	}
	b.enter(Draining)
	for b.inbox.Pending() {
		m, _ := b.inbox.Take()
		b.handle(Draining, m, -1)
	}
	if next, _ := ownedB.Tracker.Pending(); next > 1 {
		t.Fatalf("the final commit would store %d, above 1/1, which the application never got", next)
	}
}

// The same send after the notice, then an abandon (which outranks the
// pause): recallBeforeRelease caps the position at its own lowest, 4, but
// keeps the lower ceiling 1 the notice set, so the commit loop, which may
// commit the partition until the release, never stores past 1/1.
func TestOvertakenThenAbandonedKeepsTheLowerCeiling(t *testing.T) {
	_, b := overtakeB(t, nil)
	ownedB := b.owned
	handOutShared(b, ownedB, 4)
	b.inbox.Abandon()
	if e, _, ended, ok := b.takeLocked(3); !ok || !ended || e != Abandon {
		t.Fatalf("took %v ended %v ok %v, want the abandon", e, ended, ok)
	}
	if next, _ := ownedB.Tracker.Pending(); next > 1 {
		t.Fatalf("a commit before the release would store %d, above 1/1, which the application never got", next)
	}
}

// Leaving a lost position, a partition takes back what the shared buffer
// holds of it from before (the report names where it was taken from), so
// no later take-back can find those messages, tell the partition it was
// overtaken, and restart it below the log's start it moved to.
func TestLossTakesBackTheOldPositionsMessages(t *testing.T) {
	o := NewOutbox(8)
	a, ownedA := sharedWorker(t, o, 0, nil)
	w, owned := committingSharedWorker(t, o, 10, nil)
	handOutShared(w, owned, 10, 11, 12, 13)
	handOutShared(a, ownedA, 0)
	<-o.C() // the application got 1/10
	next, ok := w.resumeAfterLoss(owned, &fetch.RetentionError{Topic: "t", Position: 14, LogStart: 100}, 14, 100)
	if !ok || next != 100 {
		t.Fatalf("resumeAfterLoss = %d, %v", next, ok)
	}
	handOutShared(w, owned, 100)
	// The application gets partition 1's second message in the buffer
	// beside a's take-back, which holds the first.
	var left []*sarama.ConsumerMessage
	seen := 0
	for len(o.C()) > 0 {
		m := <-o.C()
		if m.Partition == 1 {
			if seen++; seen == 2 {
				continue
			}
		}
		left = append(left, m)
	}
	for _, m := range left {
		o.C() <- m
	}
	a.handing.Lock()
	a.recallCapped(ownedA)
	a.handing.Unlock()
	for w.inbox.Pending() {
		_, resume, ended, ok := w.takeLocked(100)
		if ok && !ended && resume < 100 {
			t.Fatalf("after the loss moved it to 100, the partition restarts at %d, in the lost range", resume)
		}
	}
}

// What was kept for the interceptors from a lost position is forgotten:
// after a truncation the log is written again from its end, so the
// record fetched again at 7 is a new one, which must go out, not the old
// one kept from the lost log.
func TestTruncationDoesNotHandOutAnOvertakenRecordOfTheLostLog(t *testing.T) {
	o := NewOutbox(8)
	a, ownedA := sharedWorker(t, o, 0, nil)
	w, owned := committingSharedWorker(t, o, 0, func(*sarama.ConsumerMessage) {})
	handOutShared(w, owned, 6, 7, 8, 9)
	handOutShared(a, ownedA, 0)
	readAll(o.C()) // the application got 1/6 and 1/8; a's take-back holds 1/7 and 1/9
	for _, m := range []*sarama.ConsumerMessage{msgOf(1, 7), msgOf(0, 0), msgOf(1, 9)} {
		o.C() <- m
	}
	a.handing.Lock()
	a.recallCapped(ownedA)
	a.handing.Unlock()
	if _, ok := w.resumeAfterLoss(owned, &fetch.TruncationError{Topic: "t", Position: 10, LogEnd: 5}, 10, 5); !ok {
		t.Fatal("resumeAfterLoss ended consuming")
	}
	w.handing.Lock()
	defer w.handing.Unlock()
	w.forgetUnhandedBelow(5)
	fresh := &sarama.ConsumerMessage{Topic: "t", Partition: 1, Offset: 7, Value: []byte("new")}
	if got := w.interceptOnce(fresh); got != fresh {
		t.Fatal("the record at 7 of the log written again after the truncation is replaced by the one kept from the lost log")
	}
}

// committingSharedWorker is sharedWorker for t/1 with a committer whose
// ZooKeeper store records its writes (a loss commits its new start),
// tracked from next, with the interceptors' hook handingOut (nil: none).
func committingSharedWorker(t *testing.T, o *Outbox, next int64, handingOut func(*sarama.ConsumerMessage)) (*Worker, *offsets.Partition) {
	t.Helper()
	w := newTestWorkerFor(Deps{
		Session:    fakeSession{id: 7},
		HandingOut: handingOut,
		Offsets:    offsets.New(offsets.Config{}, offsets.Deps{Registry: &offsetWrites{}, Session: func() int64 { return 7 }}),
	}, TopicPartition{Topic: "t", Partition: 1})
	t.Cleanup(w.cancel)
	owned := adoptAt(w, &kazoo.PartitionClaim{Topic: "t", Partition: 1, InstanceID: "i", SessionID: 7}, next)
	w.owned, w.takeBackFrom, w.out = owned, owned, o.C()
	w.outbox = o.Register(w.tp, sharedRecall{w, owned})
	return w, owned
}
