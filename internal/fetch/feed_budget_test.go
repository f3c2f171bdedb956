package fetch

import (
	"context"
	"testing"
	"testing/synctest"
)

// A partition that holds nothing fetches at once, whatever the budget
// holds; one that holds a batch fetches ahead only while the budget has
// room, and is let go once room is made, or once it holds nothing itself.
func TestFeedBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newFeedBudget(100)
		var a, c feedHold
		// a holds nothing: no reservation needed, even past the limit.
		if r, ok := b.reserve(ctx, &a, 1000); !ok || r != 0 {
			t.Fatalf("empty partition: reserve returned %d, %v; want 0, true", r, ok)
		}
		b.settle(&a, 0, 60)
		// c holds nothing either and fetches 70: the budget is over (130).
		b.settle(&c, 0, 70)
		if b.used != 130 || a.held != 60 || c.held != 70 {
			t.Fatalf("used %d, held %d and %d; want 130, 60, 70", b.used, a.held, c.held)
		}
		// a holds a batch: a fetch ahead of 30 must wait for room.
		got := reserveWaits(t, b, &a, 30)
		// c hands out its batch: 60 used, room for 30.
		b.release(&c, 70)
		synctest.Wait()
		if r := <-got; r != 30 || b.used != 90 || a.held != 90 {
			t.Fatalf("reserved %d, used %d, a holds %d; want 30, 90, 90", r, b.used, a.held)
		}
		// The fetch returned 10 of the 30 reserved.
		b.settle(&a, 30, 10)
		if b.used != 70 || a.held != 70 {
			t.Fatalf("after settle: used %d, a holds %d; want 70, 70", b.used, a.held)
		}
		// c holds 50 and wants 50 more: no room (170 > 100) until a,
		// holding the budget, is released; a stopping releases all.
		b.settle(&c, 0, 50)
		got = reserveWaits(t, b, &c, 50)
		b.releaseAll(&a)
		synctest.Wait()
		if r := <-got; r != 50 || b.used != 100 || a.held != 0 {
			t.Fatalf("reserved %d, used %d, a holds %d; want 50, 100, 0", r, b.used, a.held)
		}
		// A partition waiting for room goes on once it holds nothing
		// itself (its own batch handed out), though the budget is full.
		b.settle(&a, 0, 20)
		got = reserveWaits(t, b, &a, 50)
		b.release(&a, 20)
		synctest.Wait()
		if r := <-got; r != 0 {
			t.Fatalf("a partition holding nothing reserved %d, want 0", r)
		}
		// A wait ends with its context.
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan bool, 1)
		go func() {
			_, ok := b.reserve(cctx, &c, 50)
			done <- ok
		}()
		synctest.Wait()
		cancel()
		if <-done {
			t.Fatal("reserve succeeded after its context ended")
		}
	})
}

// reserveWaits starts b.reserve(h, n) and checks that it waits for room;
// the channel gets what it reserves once it returns.
func reserveWaits(t *testing.T, b *feedBudget, h *feedHold, n int64) <-chan int64 {
	t.Helper()
	got := make(chan int64, 1)
	go func() {
		r, _ := b.reserve(context.Background(), h, n)
		got <- r
	}()
	synctest.Wait()
	select {
	case r := <-got:
		t.Fatalf("fetch ahead reserved %d over the budget", r)
	default:
	}
	return got
}

// Room made in the budget goes to the partitions it can serve, and wakes
// no other: a group of thousands of partitions behind a slow reader has
// most of them waiting, and each batch handed out, each fetch that
// returned less than it reserved, used to wake every one of them to find
// no room and wait again.
func TestFeedBudgetWakesOnlyWhomItServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const waiting = 50
		b := newFeedBudget(1000)
		var owner feedHold
		b.settle(&owner, 0, 1000-waiting) // with the waiting ones' batches, the budget is full
		holds := make([]feedHold, waiting)
		got := make(chan int64, waiting)
		for i := range holds {
			b.settle(&holds[i], 0, 1) // each holds a batch: it must wait for room
		}
		defer func() { // a failed check leaves partitions waiting: let them go
			for i := range holds {
				b.releaseAll(&holds[i])
			}
		}()
		for i := range holds {
			go func() {
				r, _ := b.reserve(context.Background(), &holds[i], 10)
				got <- r
			}()
		}
		synctest.Wait()
		if n := len(got); n != 0 {
			t.Fatalf("%d of %d fetched ahead over a full budget", n, waiting)
		}
		woken := b.wakeups.Load()
		b.release(&owner, 20) // room for two fetches of 10
		synctest.Wait()
		if n := len(got); n != 2 {
			t.Fatalf("room for 2 let %d fetch ahead", n)
		}
		if w := b.wakeups.Load() - woken; w > 2 {
			t.Fatalf("room for 2 woke %d waiting partitions", w)
		}
		b.releaseAll(&owner) // room for every one
		synctest.Wait()
		if n := len(got); n != waiting {
			t.Fatalf("after the owner stopped, %d of %d fetched ahead", n, waiting)
		}
	})
}
