package worker

import (
	"testing"

	"github.com/IBM/sarama"
)

// overtakeB sets up the overtaken scenario of
// TestOvertakenPartitionRestartsBelowWhatWasTakenBack: b sent 0..3 (ring
// [0 1 2 3]), the application got 1/0 and 1/2, a's take-back held 1/1 and
// 1/3 and tells b it was overtaken at 1. hand runs each of b's sends.
func overtakeB(t *testing.T, counts map[int64]int) (a, b *Worker) {
	t.Helper()
	o := NewOutbox(8)
	a, ownedA := sharedWorker(t, o, 0, nil)
	b, ownedB := sharedWorker(t, o, 1, nil)
	if counts != nil {
		b.deps.HandingOut = func(m *sarama.ConsumerMessage) { counts[m.Offset]++ }
	}
	b.handing.Lock()
	for off := int64(0); off < 4; off++ {
		m := b.interceptOnce(msgOf(1, off))
		ownedB.Offer(off)
		ownedB.OfferMessage(m)
		if !b.outbox.TrySend(m) {
			t.Fatal("no room")
		}
		delete(b.unhanded, off)
		ownedB.Delivered(off)
	}
	b.handing.Unlock()
	handOutShared(a, ownedA, 0)
	got := map[int64]*sarama.ConsumerMessage{}
	for len(o.C()) > 0 {
		m := <-o.C()
		if m.Partition == 1 {
			got[m.Offset] = m
		}
	}
	for _, m := range []*sarama.ConsumerMessage{got[1], msgOf(0, 0), got[3]} {
		o.C() <- m
	}
	ownedB.Mark(got[0], 0)
	ownedB.Mark(got[2], 2)
	a.handing.Lock()
	a.recallCapped(ownedA)
	a.handing.Unlock()
	if left := readAll(o.C()); len(left) != 0 || !b.inbox.Pending() {
		t.Fatalf("setup: left %v, b told %v", left, b.inbox.Pending())
	}
	return a, b
}

// A seek taken after another partition's take-back told the worker it was
// overtaken (a seek is taken before a pause) must not be undone by that
// pause: what the take-back held is from the old position, as onSeek says
// of takenBack.
func TestSeekIsNotUndoneByAnOvertakenPauseFromTheOldPosition(t *testing.T) {
	_, b := overtakeB(t, nil)
	b.inbox.SeekTo(100) // the committer adopted a stored offset 100
	e, resume, ended, ok := b.takeLocked(3)
	if !ok || ended || e != Seek || resume != 100 {
		t.Fatalf("first take: %v resume %d ended %v ok %v, want the seek to 100", e, resume, ended, ok)
	}
	for b.inbox.Pending() {
		e, resume, ended, ok = b.takeLocked(100)
		if ok && !ended && resume < 100 {
			next, dirty := b.owned.Tracker.Pending()
			t.Fatalf("after the seek to 100, a %v restarts the partition at %d, below the adopted offset (pending %d dirty %v)", e, resume, next, dirty)
		}
	}
}

// The interceptors run once per record: a message a recall took back
// unread goes out again as kept (interceptOnce), and so does one another
// partition's take-back took (overtaken) and the partition fetches again.
func TestOvertakenMessageIsInterceptedOnce(t *testing.T) {
	counts := map[int64]int{}
	_, b := overtakeB(t, counts)
	_, resume, ended, ok := b.takeLocked(3)
	if !ok || ended || resume != 1 {
		t.Fatalf("b resumes at %d (ok %v ended %v), want a restart at 1", resume, ok, ended)
	}
	b.handing.Lock()
	b.forgetUnhandedBelow(resume)
	b.interceptOnce(msgOf(1, 1)) // refetched: the application never got 1/1
	b.interceptOnce(msgOf(1, 3)) // nor 1/3
	b.handing.Unlock()
	for _, off := range []int64{1, 3} {
		if counts[off] != 1 {
			t.Errorf("offset %d intercepted %d times; the application never got it (taken back unread)", off, counts[off])
		}
	}
}

// Close's TakeBackAll (the buffer unread for 200 ms) fires also when the
// application still reads but spends longer than that on one message. A
// draining partition does not restart then: the drain still waits for the
// mark of the message the application is processing, which it got before
// the take-back, and the mark counts.
func TestTakeBackAllKeepsTheMarkOfAMessageInProcess(t *testing.T) {
	o := NewOutbox(8)
	b, ownedB := sharedWorker(t, o, 1, nil)
	handOutShared(b, ownedB, 0, 1, 2)
	inProcess := <-o.C() // read before Close; processing takes > 200 ms
	b.enter(Draining)
	if n := o.TakeBackAll(); n != 2 {
		t.Fatalf("TakeBackAll took %d, want 2", n)
	}
	for b.inbox.Pending() {
		m, _ := b.inbox.Take()
		b.handle(Draining, m, -1)
	}
	if settled, _ := ownedB.Tracker.Settled(); settled {
		t.Error("the drain is settled while the application still processes 1/0, which it got before the take-back")
	}
	if !ownedB.Mark(inProcess, 0) {
		t.Error("the mark of 1/0, read before the take-back, is refused: it is delivered again though processed")
	}
}

// A partition's ring of last sends grows with its sends up to ringMax,
// however large the buffer: one partition with more than that in the
// channel is counted as overtaken by another's take-back (it restarts at
// its mark), never put back unchecked.
func TestRingOfLastSendsIsBounded(t *testing.T) {
	o := NewOutbox(1 << 20)
	p := o.Register(TopicPartition{Topic: "t", Partition: 0}, &fakeOvertaker{})
	wq := &fakeOvertaker{}
	q := o.Register(TopicPartition{Topic: "t", Partition: 1}, wq)
	if len(p.sent) != 0 {
		t.Fatalf("a ring of %d before any send", len(p.sent))
	}
	for off := range int64(ringMax + 100) {
		q.TrySend(msgOf(1, off))
	}
	if len(q.sent) != ringMax {
		t.Errorf("a ring of %d after %d sends, want %d", len(q.sent), ringMax+100, ringMax)
	}
	p.TrySend(msgOf(0, 0))
	p.TakeBack()
	if told := wq.told(); len(told) != 1 || told[0] != 0 {
		t.Errorf("partition 1 told %v, want overtaken from 0: its %d messages are more than its ring holds", told, ringMax+100)
	}
}
