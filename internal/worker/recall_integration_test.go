package worker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// pumpFixture is a worker in state consuming whose output is a buffered
// channel of capacity capacity, as a handler's claim has, with its offsets
// tracked from 0. The kazoo session only serves the claim's validity check
// (the claim's session is the current one), hence the local stack's
// ZooKeeper.
type pumpFixture struct {
	w     *Worker
	gate  *fence.Gate
	owned *offsets.Partition
	out   chan *sarama.ConsumerMessage
}

type pumpResult struct {
	resume int64
	e      Event
	ended  bool
}

func newPumpFixture(t testing.TB, capacity int) *pumpFixture {
	t.Helper()
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kz.Close() })
	gate := fence.NewGate()
	w := newTestWorker(Deps{Session: kz, Gate: gate})
	t.Cleanup(w.cancel)
	w.out = make(chan *sarama.ConsumerMessage, capacity)
	owned := adoptAt(w, testClaim(kz.SessionID()), 0)
	w.owned = owned
	t.Cleanup(gate.Listen(w.onGatePause)) // as run does
	return &pumpFixture{w: w, gate: gate, owned: owned, out: w.out}
}

// run starts pump at 0 over a partition consumer serving the given offsets.
func (f *pumpFixture) run(offsets ...int64) <-chan pumpResult {
	return f.runFrom(openedConsumer(newFakePartitionConsumer(offsets...)), 0)
}

// runFrom starts pump at start with src.
func (f *pumpFixture) runFrom(src fetch.Source, start int64) <-chan pumpResult {
	res := make(chan pumpResult, 1)
	go func() {
		r, e, ended := f.w.pump(f.owned, src, start)
		res <- pumpResult{r, e, ended}
	}()
	return res
}

// toDraining hands the given offsets to the buffer, stops the worker
// cleanly and closes the output, as entering draining does: the buffer
// still holds every one of them.
func (f *pumpFixture) toDraining(t *testing.T, offsets ...int64) {
	t.Helper()
	res := f.run(offsets...)
	f.waitBuffered(t, len(offsets))
	f.w.Stop(false)
	await(t, res)
	f.w.inbox.Take() // the stop that brought it to draining
	close(f.out)
}

// waitBuffered waits until the buffer holds n messages.
func (f *pumpFixture) waitBuffered(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(f.out) != n {
		if time.Now().After(deadline) {
			t.Fatalf("buffer holds %d messages, want %d", len(f.out), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func await(t *testing.T, res <-chan pumpResult) pumpResult {
	t.Helper()
	select {
	case r := <-res:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("pump did not return")
		return pumpResult{}
	}
}

// When the claim is lost, what the claim's buffer holds must not reach the
// handler: another instance may own the partition by now. Without the
// recall the buffer keeps all six messages for the handler to read.
func TestIntegrationRecallOnLoss(t *testing.T) {
	for _, c := range []struct {
		name  string
		event func(w *Worker)
		want  Event
	}{
		{"loss", func(w *Worker) { w.lost() }, Loss},
		{"abandon", func(w *Worker) { w.Stop(true) }, Abandon},
		{"seek", func(w *Worker) { w.inbox.SeekTo(2) }, Seek},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newPumpFixture(t, 8)
			res := f.run(0, 1, 2, 3, 4, 5)
			f.waitBuffered(t, 6)
			c.event(f.w)
			r := await(t, res)
			if r.e != c.want {
				t.Fatalf("pump ended with %v, want %v", r.e, c.want)
			}
			if n := len(f.out); n != 0 {
				t.Errorf("the claim's buffer still holds %d messages for the handler after a %v", n, c.want)
			}
		})
	}
}

// A clean stop takes nothing back: the handler reads what the buffer holds
// (the channel closes after it), and the drain waits for those marks.
func TestIntegrationCleanStopKeepsTheBuffer(t *testing.T) {
	f := newPumpFixture(t, 8)
	res := f.run(0, 1, 2)
	f.waitBuffered(t, 3)
	f.w.Stop(false)
	if r := await(t, res); !r.ended || r.e != Stop {
		t.Fatalf("pump = %+v, want to end with stop", r)
	}
	if n := len(f.out); n != 3 {
		t.Fatalf("buffer holds %d messages after a clean stop, want all 3 for the handler", n)
	}
	if d := f.owned.Tracker.LastDelivered(); d != 2 {
		t.Errorf("delivered up to %d, want 2: the drain must wait for the buffered messages' marks", d)
	}
}

// Fenced off with messages unread in the buffer: they are taken back, the
// partition restarts at its marked offset, and a late mark of a message
// the handler got before the pause cannot move the position past what it
// did not get.
func TestIntegrationRecallOnPause(t *testing.T) {
	f := newPumpFixture(t, 8)
	res := f.run(0, 1, 2, 3, 4, 5)
	f.waitBuffered(t, 6)
	m0, m1 := <-f.out, <-f.out // the handler gets 0 and 1, marks 0
	if !f.owned.Mark(m0, m0.Offset) {
		t.Fatal("mark of 0 refused")
	}
	f.gate.Set(true)
	r := await(t, res)
	if r.ended || r.e != Pause || r.resume != 1 {
		t.Fatalf("pump = %+v after the pause, want to resume at the marked offset 1", r)
	}
	if n := len(f.out); n != 0 {
		t.Errorf("the buffer still holds %d messages while fenced off", n)
	}
	if f.owned.Mark(m1, m1.Offset) {
		t.Error("a mark of a message delivered before the restart was accepted")
	}
	if next, _ := f.owned.Tracker.Pending(); next != 1 {
		t.Errorf("position %d, want 1", next)
	}

	// Pumping again at 1 while fenced off hands nothing out until the gate
	// opens, then delivers from 1.
	res = f.runFrom(openedConsumer(newFakePartitionConsumer(1, 2)), 1)
	time.AfterFunc(200*time.Millisecond, func() { f.gate.Set(false) })
	select {
	case m := <-f.out:
		if m.Offset != 1 {
			t.Errorf("first message after the pause: %d, want 1", m.Offset)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing delivered after the gate opened")
	}
	f.w.Stop(false)
	await(t, res)
}

// A pause with nothing left in the buffer changes nothing: no restart.
func TestIntegrationPauseWithEmptyBufferKeepsPosition(t *testing.T) {
	f := newPumpFixture(t, 8)
	res := f.run(0, 1)
	f.waitBuffered(t, 2)
	<-f.out
	<-f.out
	f.gate.Set(true)
	time.Sleep(100 * time.Millisecond)
	f.gate.Set(false)
	f.w.Stop(false)
	if r := await(t, res); !r.ended || r.e != Stop {
		t.Fatalf("pump = %+v, want to end with the stop only", r)
	}
	if d := f.owned.Tracker.LastDelivered(); d != 1 {
		t.Errorf("delivered up to %d, want 1", d)
	}
}

// Fenced off while draining, with messages of a closed claim unread: they
// are taken back, and the drain ends at once with the marked position to
// commit, instead of waiting for marks that can no longer come.
func TestIntegrationRecallWhileDraining(t *testing.T) {
	f := newPumpFixture(t, 8)
	f.toDraining(t, 0, 1, 2, 3)
	m0 := <-f.out
	f.owned.Mark(m0, m0.Offset)
	f.w.drainDeadline = time.Now().Add(time.Minute)
	drained := make(chan Event, 1)
	go func() { drained <- f.w.drain() }()
	time.Sleep(100 * time.Millisecond)
	f.gate.Set(true)
	select {
	case e := <-drained:
		if e != Finished {
			t.Errorf("drain ended with %v, want finished", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("drain still waits for marks of messages taken back")
	}
	if _, ok := <-f.out; ok {
		t.Error("a message is still readable after the recall")
	}
	if next, _ := f.owned.Tracker.Pending(); next != 1 {
		t.Errorf("position to commit %d, want the marked 1", next)
	}
}

// A drain that times out with messages of a closed claim unread takes them
// back before the release (the handler must read nothing more), and the
// final commit never stores a position above the lowest one taken back.
func TestIntegrationRecallAfterDrainTimeout(t *testing.T) {
	f := newPumpFixture(t, 8)
	f.toDraining(t, 0, 1, 2, 3)
	<-f.out
	m1 := <-f.out // the handler got 0 and 1 and marked 1
	f.owned.Mark(m1, m1.Offset)
	f.w.drainDeadline = time.Now().Add(200 * time.Millisecond)
	if e := f.w.drain(); e != Finished {
		t.Fatalf("drain ended with %v, want finished", e)
	}
	if f.w.drainErr == nil {
		t.Error("no error for the marks that never came")
	}
	if _, ok := <-f.out; ok {
		t.Error("a message is still readable after the drain gave up")
	}
	// A mark of a message the handler got while the buffer was emptied
	// (above one taken back) must not be committed.
	f.owned.Tracker.MarkOffset(3)
	if next, _ := f.owned.Tracker.Pending(); next != 2 {
		t.Errorf("position to commit %d, want 2: the lowest offset taken back", next)
	}
}

// A commit in flight may hang while ZooKeeper is silent, which is exactly
// when the gate pauses: the buffer must be emptied at once all the same,
// not after the commit gives up.
func TestIntegrationRecallOnPauseDoesNotWaitForACommit(t *testing.T) {
	f := newPumpFixture(t, 8)
	res := f.run(0, 1, 2, 3)
	f.waitBuffered(t, 4)
	f.owned.TestCommitLocker().Lock() // a commit in flight, hanging
	f.gate.Set(true)
	deadline := time.Now().Add(2 * time.Second)
	for len(f.out) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := len(f.out); n != 0 {
		t.Errorf("the buffer still holds %d messages while fenced off: the recall waits for the commit in flight", n)
	}
	f.owned.TestCommitLocker().Unlock()
	if r := await(t, res); r.ended || r.e != Pause || r.resume != 0 {
		t.Fatalf("pump = %+v, want to restart at the marked offset 0", r)
	}
}
