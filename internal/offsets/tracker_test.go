package offsets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func checkPending(t *testing.T, tr *Tracker, wantNext int64, wantDirty bool) {
	t.Helper()
	next, dirty := tr.Pending()
	if next != wantNext || dirty != wantDirty {
		t.Fatalf("Pending() = %d, %v; want %d, %v", next, dirty, wantNext, wantDirty)
	}
}

func TestTrackerMarkAndCommit(t *testing.T) {
	tr := NewTracker(100) // stored next offset 100
	checkPending(t, tr, 100, false)

	if !tr.MarkOffset(100) {
		t.Fatal("first mark must be accepted")
	}
	checkPending(t, tr, 101, true)

	if !tr.MarkOffset(104) {
		t.Fatal("a higher mark must be accepted (gaps allowed, as upstream)")
	}
	checkPending(t, tr, 105, true)

	// Lower and equal marks are ignored and reported.
	for _, off := range []int64{104, 102, 99, 0, -1, -2} {
		if tr.MarkOffset(off) {
			t.Fatalf("MarkOffset(%d) accepted after 104", off)
		}
	}
	checkPending(t, tr, 105, true)

	tr.Committed(105)
	checkPending(t, tr, 105, false)

	// Committed never moves backwards.
	tr.Committed(101)
	checkPending(t, tr, 105, false)

	tr.MarkOffset(110)
	tr.Committed(108) // a commit of an older Pending result
	checkPending(t, tr, 111, true)
	tr.Committed(111)
	checkPending(t, tr, 111, false)
}

func TestTrackerNothingStored(t *testing.T) {
	tr := NewTracker(-1) // no stored offset
	checkPending(t, tr, -1, false)
	if tr.MarkOffset(-1) {
		t.Fatal("negative offsets are invalid")
	}
	if !tr.MarkOffset(0) {
		t.Fatal("offset 0 must be accepted when nothing is stored")
	}
	checkPending(t, tr, 1, true)
	tr.Committed(1)
	checkPending(t, tr, 1, false)
}

func TestTrackerReset(t *testing.T) {
	tr := NewTracker(10)
	tr.MarkOffset(19)
	checkPending(t, tr, 20, true)

	// Conflict: an operator reset the stored offset back to 5.
	tr.Reset(5)
	checkPending(t, tr, 5, false)
	if tr.MarkOffset(4) {
		t.Fatal("marks below the reset position are stale")
	}
	if !tr.MarkOffset(5) {
		t.Fatal("the first message after the reset must be markable")
	}
	checkPending(t, tr, 6, true)

	// A reset forward works the same way.
	tr.Reset(50)
	checkPending(t, tr, 50, false)
	if tr.MarkOffset(30) {
		t.Fatal("marks below the reset position are stale")
	}
	// After a reset, Committed may again go from the new position.
	tr.MarkOffset(51)
	tr.Committed(52)
	checkPending(t, tr, 52, false)
}

func TestTrackerConcurrentMarks(t *testing.T) {
	tr := NewTracker(0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for off := int64(g); off < 1000; off += 8 {
				tr.MarkOffset(off)
				tr.Delivered(off)
				tr.Pending()
			}
		})
	}
	wg.Wait()
	checkPending(t, tr, 1000, true)
	if err := tr.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestTrackerDrainImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(7)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()

		// Nothing delivered.
		if err := tr.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		// Everything delivered is marked.
		tr.Delivered(7)
		tr.Delivered(8)
		tr.MarkOffset(8)
		if err := tr.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("Drain waited %s", d)
		}
	})
}

func TestTrackerDrainWaitsForLastMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		for off := int64(0); off <= 9; off++ {
			tr.Delivered(off)
		}
		tr.MarkOffset(4)

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- tr.Drain(ctx) }()

		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Drain returned early: %v", err)
		default:
		}

		time.Sleep(10 * time.Second) // the application is still working
		tr.MarkOffset(8)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Drain returned before offset 9 was marked: %v", err)
		default:
		}

		time.Sleep(5 * time.Second)
		tr.MarkOffset(9)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 15*time.Second {
			t.Fatalf("Drain took %s, want 15s", d)
		}
	})
}

func TestTrackerDrainMarkPastLast(t *testing.T) {
	// Upstream waited for an exact offset and missed marks that jumped past
	// it; any mark at or beyond the last delivered offset must end the wait.
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		tr.Delivered(3)
		done := make(chan error, 1)
		go func() { done <- tr.Drain(t.Context()) }()
		synctest.Wait()
		tr.MarkOffset(20)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestTrackerDrainTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(100)
		tr.Delivered(100)
		tr.Delivered(101)
		tr.Delivered(102)
		tr.MarkOffset(100)

		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		start := time.Now()
		err := tr.Drain(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 60*time.Second {
			t.Fatalf("Drain gave up after %s, want 60s", d)
		}
		if !strings.Contains(err.Error(), "101..102") {
			t.Fatalf("message %q must name the outstanding offsets", err)
		}
		// The partial progress is still there to commit.
		checkPending(t, tr, 101, true)
	})
}

func TestTrackerDrainCancelWithCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		tr.Delivered(0)
		cause := errors.New("session expired")
		ctx, cancel := context.WithCancelCause(t.Context())
		done := make(chan error, 1)
		go func() { done <- tr.Drain(ctx) }()
		synctest.Wait()
		cancel(cause)
		err := <-done
		if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
			t.Fatalf("got %v, want Canceled and the cause", err)
		}
	})
}

func TestTrackerDrainEndsOnReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		tr.Delivered(5)
		done := make(chan error, 1)
		go func() { done <- tr.Drain(t.Context()) }()
		synctest.Wait()
		tr.Reset(3) // the partition was seeked: nothing from before is outstanding
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		tr.Delivered(3)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := tr.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a delivery after the reset must be waited for, got %v", err)
		}
	})
}

func TestTrackerDrainManyWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTracker(0)
		tr.Delivered(0)
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- tr.Drain(t.Context()) }()
		}
		synctest.Wait()
		tr.MarkOffset(0)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A position set by ResetUncommitted is pending until committed, even with
// nothing marked; marks move it forward only; a commit clears it.
func TestTrackerResetUncommitted(t *testing.T) {
	tr := NewTracker(-1) // nothing stored
	checkPending(t, tr, -1, false)
	tr.ResetUncommitted(40) // the start resolved from Offsets.Initial
	checkPending(t, tr, 40, true)
	if tr.MarkOffset(39) {
		t.Fatal("a mark below the start must be refused")
	}
	checkPending(t, tr, 40, true)
	tr.Committed(40)
	checkPending(t, tr, 40, false)
	if !tr.MarkOffset(40) {
		t.Fatal("a mark of the first message must be accepted")
	}
	checkPending(t, tr, 41, true)

	// A mark before the start was committed is committed instead of it.
	tr = NewTracker(-1)
	tr.ResetUncommitted(7)
	tr.MarkOffset(9)
	checkPending(t, tr, 10, true)
	tr.Committed(10)
	checkPending(t, tr, 10, false)

	// A reset below the stored offset (the stored one was out of range) is
	// still pending: it must overwrite the stored offset.
	tr = NewTracker(1000)
	tr.ResetUncommitted(5)
	checkPending(t, tr, 5, true)
	tr.Committed(5)
	checkPending(t, tr, 5, false)

	// Marks judged before the reset are refused.
	tr = NewTracker(3)
	gen := tr.Generation()
	tr.ResetUncommitted(0)
	if tr.MarkOffsetAt(5, gen) {
		t.Fatal("a mark from before the reset must be refused")
	}
	checkPending(t, tr, 0, true)
}

// RestartAtMark never restarts above the lowest offset the application
// never got: a mark above it (the application got 3 while 2 was taken
// back) cannot mean 2 was processed. It starts a new generation.
func TestTrackerRestartAtMarkCeiling(t *testing.T) {
	tr := NewTracker(0)
	tr.Delivered(3)
	gen := tr.Generation()
	if !tr.MarkOffset(3) {
		t.Fatal("mark refused")
	}
	if to := tr.RestartAtMark(2); to != 2 {
		t.Fatalf("RestartAtMark(2) = %d, want 2", to)
	}
	if tr.MarkOffsetAt(4, gen) {
		t.Error("a mark judged before the restart was accepted")
	}
	if next, dirty := tr.Pending(); next != 2 || !dirty {
		t.Errorf("Pending = (%d, %v), want (2, true)", next, dirty)
	}
	if to := tr.RestartAtMark(-1); to != 2 {
		t.Errorf("RestartAtMark(-1) = %d, want the position 2", to)
	}
}

// LowerCeiling caps what is committed, and a drain ends once the position
// reaches it, although a higher delivered offset was never marked.
func TestTrackerCeiling(t *testing.T) {
	tr := NewTracker(0)
	tr.Delivered(9)
	tr.MarkOffset(6)
	tr.LowerCeiling(4)
	if next, dirty := tr.Pending(); next != 4 || !dirty {
		t.Errorf("Pending = (%d, %v), want the ceiling (4, true)", next, dirty)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := tr.Drain(ctx); err != nil {
		t.Errorf("Drain = %v, want nil: the position reached the ceiling", err)
	}
	tr.Reset(7)
	if next, _ := tr.Pending(); next != 7 {
		t.Errorf("after Reset, Pending = %d, want 7 (no ceiling)", next)
	}
}
