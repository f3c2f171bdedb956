package consumergroup

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// drainingWorker is a worker in state draining with one message delivered
// and not marked, its drain ending after timeout.
func drainingWorker(timeout time.Duration) (*partitionWorker, *offsetManager, *offsets.Partition) {
	cg := &ConsumerGroup{log: slog.New(slog.DiscardHandler)}
	om := newTestOffsetManager(cg)
	w := newBareWorker()
	w.cg, w.tp = cg, topicPartition{"t", 0}
	o := om.adoptAt(w.tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}, 0, w)
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
		event func(o *offsets.Partition, w *partitionWorker)
		want  worker.State
	}{
		{"claim lost", func(o *offsets.Partition, w *partitionWorker) { o.SetLost(); w.lost() }, worker.Releasing},
		{"abandoned", func(_ *offsets.Partition, w *partitionWorker) { w.stop(true) }, worker.Releasing},
		{"session gone: the manage loop abandons", func(_ *offsets.Partition, w *partitionWorker) { w.stop(true) }, worker.Releasing},
		{"conflict", func(o *offsets.Partition, w *partitionWorker) {
			o.SetSeeking()
			w.CommitResult(offsets.CommitResult{Moved: true, Stored: 3})
		}, worker.Committing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, om, o := drainingWorker(time.Minute)
				w.stop(false) // what brought it to draining
				w.inbox.Take()
				drained := make(chan worker.Event, 1)
				go func() { drained <- w.drain() }()
				time.Sleep(time.Second)
				start := time.Now()
				c.event(o, w)
				e := <-drained
				if took := time.Since(start); took != 0 {
					t.Errorf("drain took %v after the event, want it to end at once", took)
				}
				if got := worker.Next(worker.Draining, e); got != c.want {
					t.Fatalf("drain ended with %v, leading to %v; want %v", e, got, c.want)
				}
				if w.drainErr != nil {
					t.Errorf("drain error %v, want none: it was interrupted, not timed out", w.drainErr)
				}
				if c.want == worker.Committing {
					if e := w.commitFinal(); e != worker.Finished {
						t.Errorf("final commit ended with %v, want finished", e)
					}
					if next, dirty := o.Tracker.Pending(); dirty {
						t.Errorf("offset %d still pending: the stored offset must stand", next)
					}
				}
				if c.want == worker.Releasing {
					w.enter(worker.Releasing)
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
		drained := make(chan worker.Event, 1)
		go func() { drained <- w.drain() }()
		time.Sleep(5 * time.Second)
		w.stop(false)
		time.Sleep(5 * time.Second)
		select {
		case e := <-drained:
			t.Fatalf("drain ended with %v before the mark or the timeout", e)
		default:
		}
		if !o.Mark(nil, 0) {
			t.Fatal("mark refused")
		}
		if e := <-drained; e != worker.Finished {
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
		if e := w.drain(); e != worker.Finished {
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

// newBareWorker is a worker with its events and nothing running, for tests
// of the offset manager's and the sinks' side of the lifecycle.
func newBareWorker() *partitionWorker {
	return newWorker(nil, topicPartition{})
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
		drained := make(chan worker.Event, 1)
		go func() {
			defer close(prev.done)
			e := prev.drain()
			drained <- e
		}()
		prev.stop(false) // the partition moved away: a clean stop
		synctest.Wait()

		w := newBareWorker()
		defer w.cancel()
		w.cg, w.tp, w.prev = prev.cg, prev.tp, prev
		claimed := make(chan worker.Event, 1)
		go func() { claimed <- w.claimPartition() }()
		synctest.Wait()

		start := time.Now()
		w.stop(true) // the session expired: abandon
		if e := <-claimed; e != worker.Abandon {
			t.Errorf("successor ended claiming with %v, want abandon", e)
		}
		if e := <-drained; e != worker.Abandon {
			t.Errorf("predecessor's drain ended with %v, want abandon", e)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("abandoning the successor took %v: the predecessor drained on", took)
		}
	})
}
