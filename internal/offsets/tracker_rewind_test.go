package offsets

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A rewind (a session's ResetOffset) is committed although it is lower than
// what is stored, only moves backwards, and is undone by a later mark above
// it, as sarama's ResetOffset.
func TestTrackerRewind(t *testing.T) {
	tr := NewTracker(100)
	tr.MarkOffset(109)
	tr.Committed(110)
	checkPending(t, tr, 110, false)

	for _, bad := range []int64{111, -1} {
		if tr.Rewind(bad) {
			t.Fatalf("Rewind(%d) accepted at 110: only backwards, never negative", bad)
		}
	}
	if !tr.Rewind(104) {
		t.Fatal("Rewind(104) refused at 110")
	}
	checkPending(t, tr, 104, true) // lower than stored, and still to be written
	tr.Committed(104)
	checkPending(t, tr, 104, false)

	// Marks move forward from the rewound position as usual.
	if !tr.MarkOffset(104) {
		t.Fatal("a mark at the rewound position must count")
	}
	checkPending(t, tr, 105, true)
	tr.Committed(105)
	checkPending(t, tr, 105, false)

	// After the rewound position is written, committed moves only forward
	// again.
	tr.Committed(101)
	checkPending(t, tr, 105, false)
}

// A commit in flight when the rewind happens (it read the higher position
// before) must not swallow the rewind: the rewound position is written by
// the next commit.
func TestTrackerRewindDuringCommit(t *testing.T) {
	t.Run("higher commit lands after the rewind", func(t *testing.T) {
		tr := NewTracker(0)
		tr.MarkOffset(49)
		next, _ := tr.Pending() // a commit of 50 starts
		tr.Rewind(20)
		tr.Committed(next) // and lands
		checkPending(t, tr, 20, true)
		tr.Committed(20)
		checkPending(t, tr, 20, false)
	})
	t.Run("rewind to the stored offset while more is in flight", func(t *testing.T) {
		tr := NewTracker(30)
		tr.MarkOffset(49)
		next, _ := tr.Pending() // 50 in flight
		tr.Rewind(30)           // what is stored before it lands
		checkPending(t, tr, 30, false)
		tr.Committed(next)
		checkPending(t, tr, 30, true)
	})
	t.Run("marks past the stored offset before the rewind is written", func(t *testing.T) {
		tr := NewTracker(0)
		tr.MarkOffset(49)
		tr.Committed(50)
		tr.Rewind(20)
		next, _ := tr.Pending() // 20 in flight
		tr.MarkOffset(49)       // back to where the stored offset is
		tr.Committed(next)      // 20 stored
		checkPending(t, tr, 50, true)
		tr.Committed(50)
		checkPending(t, tr, 50, false)
	})
	t.Run("a reset ends the rewind", func(t *testing.T) {
		tr := NewTracker(0)
		tr.MarkOffset(49)
		tr.Committed(50)
		tr.Rewind(20)
		tr.Reset(70) // an offset conflict: 70 is stored
		checkPending(t, tr, 70, false)
		tr.Committed(60) // a stale commit result changes nothing
		checkPending(t, tr, 70, false)
	})
}

// A rewind declares what was delivered unprocessed: a drain stops waiting
// for it, and waits again for what is delivered after.
func TestTrackerRewindEndsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		tr.Delivered(9)
		tr.MarkOffset(4)
		done := make(chan error, 1)
		go func() { done <- tr.Drain(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("drain ended with 5..9 unmarked: %v", err)
		default:
		}
		tr.Rewind(3)
		if err := <-done; err != nil {
			t.Fatalf("drain after the rewind: %v", err)
		}

		tr.Delivered(12)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := tr.Drain(ctx); err == nil {
			t.Fatal("a delivery after the rewind must be waited for")
		}
	})
}
