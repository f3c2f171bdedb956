package claim

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// gatedRun is a batch function that records each batch and holds it until
// the test lets it go.
type gatedRun struct {
	mu      sync.Mutex
	batches [][]int
	started chan struct{} // a token per batch started
	release chan struct{} // a token lets one batch return
}

func newGatedRun() *gatedRun {
	return &gatedRun{started: make(chan struct{}, 100), release: make(chan struct{}, 100)}
}

func (g *gatedRun) run(ins []int) []int {
	g.mu.Lock()
	g.batches = append(g.batches, slices.Clone(ins))
	g.mu.Unlock()
	g.started <- struct{}{}
	<-g.release
	outs := make([]int, len(ins))
	for i, in := range ins {
		outs[i] = in * 10
	}
	return outs
}

func (g *gatedRun) seen() [][]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.batches)
}

// waitQueued waits until n calls are queued behind the batch in flight.
func waitQueued[In, Out any](t *testing.T, c *coalescer[In, Out], n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", q, n)
		}
	}
}

// doAsync runs c.do(ctx, in) in a goroutine and returns its answer's channel.
func doAsync(ctx context.Context, c *coalescer[int, int], in int) <-chan [2]any {
	out := make(chan [2]any, 1)
	go func() {
		v, err := c.do(ctx, in)
		out <- [2]any{v, err}
	}()
	return out
}

func TestCoalescerRunsALoneCallAtOnce(t *testing.T) {
	g := newGatedRun()
	g.release <- struct{}{}
	c := newCoalescer(8, g.run)
	if v, err := c.do(context.Background(), 7); v != 70 || err != nil {
		t.Fatalf("do(7) = %d, %v; want 70, nil", v, err)
	}
	if got := g.seen(); !slices.EqualFunc(got, [][]int{{7}}, slices.Equal) {
		t.Fatalf("batches %v, want [[7]]", got)
	}
}

func TestCoalescerBatchesTheCallsQueuedBehindABatchInFlight(t *testing.T) {
	g := newGatedRun()
	c := newCoalescer(3, g.run)
	first := doAsync(context.Background(), c, 1)
	<-g.started
	var rest []<-chan [2]any
	for i := 2; i <= 6; i++ {
		rest = append(rest, doAsync(context.Background(), c, i))
		waitQueued(t, c, i-1)
	}
	for range 3 {
		g.release <- struct{}{}
	}
	if r := <-first; r[0] != 10 || r[1] != nil {
		t.Errorf("first call: %v", r)
	}
	for i, ch := range rest {
		if r := <-ch; r[0] != (i+2)*10 || r[1] != nil {
			t.Errorf("call %d: %v, want %d", i+2, r, (i+2)*10)
		}
	}
	// The first alone, then the five queued behind it, three (max) at a time.
	want := [][]int{{1}, {2, 3, 4}, {5, 6}}
	if got := g.seen(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy || len(c.queue) > 0 {
		t.Fatalf("busy %v with %d queued after every call returned", c.busy, len(c.queue))
	}
}

func TestCoalescerWithdrawsAQueuedCallWhoseContextEnds(t *testing.T) {
	g := newGatedRun()
	c := newCoalescer(8, g.run)
	first := doAsync(context.Background(), c, 1)
	<-g.started
	ctx, cancel := context.WithCancel(context.Background())
	withdrawn := doAsync(ctx, c, 2)
	waitQueued(t, c, 1)
	kept := doAsync(context.Background(), c, 3)
	waitQueued(t, c, 2)
	cancel()
	if r := <-withdrawn; r[1] != context.Canceled {
		t.Fatalf("cancelled queued call: %v, want context.Canceled", r)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	<-first
	if r := <-kept; r[0] != 30 {
		t.Fatalf("call 3: %v", r)
	}
	want := [][]int{{1}, {3}} // 2 was never run
	if got := g.seen(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

func TestCoalescerWaitsForATakenCallWhoseContextEnds(t *testing.T) {
	g := newGatedRun()
	c := newCoalescer(8, g.run)
	first := doAsync(context.Background(), c, 1)
	<-g.started
	ctx, cancel := context.WithCancel(context.Background())
	taken := doAsync(ctx, c, 2)
	waitQueued(t, c, 1)
	g.release <- struct{}{}
	<-first
	<-g.started // the batch holding 2 is in flight
	cancel()
	select {
	case r := <-taken:
		t.Fatalf("a call in a batch in flight returned %v before its batch", r)
	case <-time.After(20 * time.Millisecond):
	}
	g.release <- struct{}{}
	if r := <-taken; r[0] != 20 || r[1] != nil {
		t.Fatalf("call 2: %v, want its batch's answer", r)
	}
}
