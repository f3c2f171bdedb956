package worker

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// drainingWorker is a worker in state draining with one message delivered
// and not marked, its drain ending after timeout.
func drainingWorker(timeout time.Duration) (*Worker, *offsets.Committer, *offsets.Partition) {
	om := offsets.New(offsets.Config{}, offsets.Deps{})
	w := newTestWorker(Deps{Offsets: om})
	o := adoptAt(w, testClaim(0), 0)
	o.Offer(0)
	o.Delivered(0) // delivered, never marked
	w.owned = o
	w.drainDeadline = time.Now().Add(timeout)
	return w, om, o
}

// TestDrainEndsWhenMarkingCannotSucceed: a partition that moves away waits
// up to ProcessingTimeout for what it delivered to be marked, but not once
// no mark could lead to a commit any more: the claim lost, the worker
// abandoned, the session gone, or an offset conflict (a seek). Each must
// end the drain at once and lead where the lifecycle table says: to the
// release without a commit, or (a conflict) to a final commit that writes
// nothing.
func TestDrainEndsWhenMarkingCannotSucceed(t *testing.T) {
	cases := []struct {
		name  string
		event func(o *offsets.Partition, w *Worker)
		want  State
	}{
		{"claim lost", func(o *offsets.Partition, w *Worker) { o.SetLost(); w.lost() }, Releasing},
		{"abandoned", func(_ *offsets.Partition, w *Worker) { w.Stop(true) }, Releasing},
		{"session gone: the manage loop abandons", func(_ *offsets.Partition, w *Worker) { w.Stop(true) }, Releasing},
		{"conflict", func(o *offsets.Partition, w *Worker) {
			o.SetSeeking()
			w.CommitResult(offsets.CommitResult{Moved: true, Stored: 3})
		}, Committing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, om, o := drainingWorker(time.Minute)
				w.Stop(false) // what brought it to draining
				w.inbox.Take()
				drained := make(chan Event, 1)
				go func() { drained <- w.drain() }()
				time.Sleep(time.Second)
				start := time.Now()
				c.event(o, w)
				e := <-drained
				if took := time.Since(start); took != 0 {
					t.Errorf("drain took %v after the event, want it to end at once", took)
				}
				if got := Next(Draining, e); got != c.want {
					t.Fatalf("drain ended with %v, leading to %v; want %v", e, got, c.want)
				}
				if w.drainErr != nil {
					t.Errorf("drain error %v, want none: it was interrupted, not timed out", w.drainErr)
				}
				if c.want == Committing {
					if e := w.commitFinal(); e != Finished {
						t.Errorf("final commit ended with %v, want finished", e)
					}
					if next, dirty := o.Tracker.Pending(); dirty {
						t.Errorf("offset %d still pending: the stored offset must stand", next)
					}
				}
				if c.want == Releasing {
					w.enter(Releasing)
				}
				if len(om.Snapshot()) != 0 {
					t.Error("the partition is still tracked")
				}
				w.cancel()
			})
		})
	}
}

// A drain with nothing to interrupt it waits for its marks, and a stop
// raised again meanwhile does not end it.
func TestDrainWaitsForMarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, o := drainingWorker(time.Minute)
		defer w.cancel()
		start := time.Now()
		drained := make(chan Event, 1)
		go func() { drained <- w.drain() }()
		time.Sleep(5 * time.Second)
		w.Stop(false)
		time.Sleep(5 * time.Second)
		select {
		case e := <-drained:
			t.Fatalf("drain ended with %v before the mark or the timeout", e)
		default:
		}
		if !o.Mark(nil, 0) {
			t.Fatal("mark refused")
		}
		if e := <-drained; e != Finished {
			t.Errorf("drain ended with %v, want finished", e)
		}
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("drain ended %v after it began, want exactly at the mark (10s)", took)
		}
		if w.drainErr != nil {
			t.Errorf("drain error %v, want none", w.drainErr)
		}
	})
}

// A drain whose marks never come ends at Offsets.ProcessingTimeout with an
// error naming the outstanding offsets, and goes on to the final commit.
func TestDrainTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, _ := drainingWorker(30 * time.Second)
		defer w.cancel()
		start := time.Now()
		if e := w.drain(); e != Finished {
			t.Errorf("drain ended with %v, want finished", e)
		}
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("drain ended after %v, want the timeout (30s)", took)
		}
		if w.drainErr == nil {
			t.Error("no error for the marks that never came")
		}
	})
}

// A worker started while its partition's previous worker here still
// drains waits for it, and the manage loop tracks only the new one. When
// the session expires (or the instance is fenced off), the manage loop
// abandons the new one: that must end the predecessor's drain too, since
// nothing may be committed any more, and the manage loop waits for both.
// Otherwise the predecessor goes on waiting for marks up to
// Offsets.ProcessingTimeout, holding up the manage loop and the
// registration after the expiry, and then commits.
func TestAbandonEndsThePredecessorsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prev, _, _ := drainingWorker(time.Minute)
		defer prev.cancel()
		prev.done = make(chan struct{})
		drained := make(chan Event, 1)
		go func() {
			defer close(prev.done)
			e := prev.drain()
			drained <- e
		}()
		prev.Stop(false) // the partition moved away: a clean stop
		synctest.Wait()

		w := newTestWorker(prev.deps)
		defer w.cancel()
		w.prev = prev
		claimed := make(chan Event, 1)
		go func() { claimed <- w.claimPartition() }()
		synctest.Wait()

		start := time.Now()
		w.Stop(true) // the session expired: abandon
		if e := <-claimed; e != Abandon {
			t.Errorf("successor ended claiming with %v, want abandon", e)
		}
		if e := <-drained; e != Abandon {
			t.Errorf("predecessor's drain ended with %v, want abandon", e)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("abandoning the successor took %v: the predecessor drained on", took)
		}
	})
}

// Once a claim's reader is gone (a handler's ConsumeClaim returned), nobody
// reads what its buffer still holds, so nobody marks it: the drain takes
// it back and ends as soon as what the handler did read is marked, rather
// than waiting Offsets.ProcessingTimeout for marks that cannot come (and
// reporting them). The position to commit stays below what the handler
// never got.
func TestDrainAfterTheReaderIsGoneTakesBackTheBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newTestWorker(Deps{})
		defer w.cancel()
		w.cfg.ProcessingTimeout = time.Minute
		owned := adoptAt(w, testClaim(0), 0)
		w.owned = owned
		w.out = make(chan *sarama.ConsumerMessage, 8)
		gone := make(chan struct{})
		w.readerGone = gone
		for o := int64(0); o < 5; o++ {
			owned.Offer(o)
			w.out <- &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o}
			owned.Delivered(o)
		}
		m := <-w.out // the handler reads and marks 0, then returns
		owned.Mark(m, m.Offset)
		close(gone)

		w.Stop(false)
		w.inbox.Take()
		w.enter(Draining)
		start := time.Now()
		if e := w.drain(); e != Finished {
			t.Fatalf("drain ended with %v, want finished", e)
		}
		if w.drainErr != nil {
			t.Errorf("drain error %v after %v: it waited for messages nobody could read", w.drainErr, time.Since(start))
		}
		if n := len(w.out); n != 0 {
			t.Errorf("the buffer still holds %d messages", n)
		}
		owned.Tracker.MarkOffset(3) // a late mark of a message never read
		if next, _ := owned.Tracker.Pending(); next != 1 {
			t.Errorf("position to commit %d, want 1: the handler got and marked 0 only", next)
		}
	})
}

// When Close's caller stops waiting (CloseContext's context ends), every
// drain ends at once, as at its deadline: the error names the offsets
// never marked and the cut, and the worker goes on to the final commit of
// what was marked, then the release. A drain that begins after the cut
// does not wait at all.
func TestDrainCutShortEndsAtOnce(t *testing.T) {
	for _, begins := range []string{"before the cut", "after the cut"} {
		t.Run(begins, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cut := make(chan struct{})
				w, _, o := drainingWorker(time.Minute)
				defer w.cancel()
				w.deps.DrainsCut = cut
				o.Offer(1)
				o.Delivered(1)
				if !o.Mark(nil, 0) {
					t.Fatal("mark refused")
				}
				w.Stop(false)
				w.inbox.Take()
				drained := make(chan Event, 1)
				if begins == "after the cut" {
					close(cut)
					go func() { drained <- w.drain() }()
				} else {
					go func() { drained <- w.drain() }()
					time.Sleep(time.Second)
					close(cut)
				}
				start := time.Now()
				e := <-drained
				if took := time.Since(start); took != 0 {
					t.Errorf("drain took %v after the cut, want it to end at once", took)
				}
				if got := Next(Draining, e); got != Committing {
					t.Errorf("drain ended with %v, leading to %v; want committing", e, got)
				}
				if !errors.Is(w.drainErr, ErrDrainCutShort) {
					t.Errorf("drain error %v, want one wrapping ErrDrainCutShort", w.drainErr)
				}
				if next, dirty := o.Tracker.Pending(); !dirty || next != 1 {
					t.Errorf("pending %d (dirty %v), want 1: the final commit stores what was marked", next, dirty)
				}
			})
		})
	}
}
