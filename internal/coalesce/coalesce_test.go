package coalesce

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
func waitQueued[In, Out any](t *testing.T, c *Coalescer[In, Out], n int) {
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

// doAsync runs c.Do(ctx, in) in a goroutine and returns its answer's channel.
func doAsync(ctx context.Context, c *Coalescer[int, int], in int) <-chan [2]any {
	out := make(chan [2]any, 1)
	go func() {
		v, err := c.Do(ctx, in)
		out <- [2]any{v, err}
	}()
	return out
}

func TestCoalescerRunsALoneCallAtOnce(t *testing.T) {
	g := newGatedRun()
	g.release <- struct{}{}
	c := New(8, g.run)
	if v, err := c.Do(context.Background(), 7); v != 70 || err != nil {
		t.Fatalf("Do(7) = %d, %v; want 70, nil", v, err)
	}
	if got := g.seen(); !slices.EqualFunc(got, [][]int{{7}}, slices.Equal) {
		t.Fatalf("batches %v, want [[7]]", got)
	}
}

func TestCoalescerBatchesTheCallsQueuedBehindABatchInFlight(t *testing.T) {
	g := newGatedRun()
	c := New(3, g.run)
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

// Call 1's batch is in flight; call 2, whose context ends, and call 3 queue
// behind it. A call whose context ends while it is queued is withdrawn and
// never run; once its batch holds it, as its leader or taken by another's,
// it waits for the batch's answer, which is never abandoned.
func TestCoalescerCallWhoseContextEnds(t *testing.T) {
	cases := []struct {
		name     string
		inFlight bool  // the context ends once call 2's batch is in flight, not while it is queued
		order    []int // the order calls 2 and 3 queue in
		want2    [2]any
		batches  [][]int
	}{
		{"QueuedIsWithdrawn", false, []int{2, 3}, [2]any{0, context.Canceled}, [][]int{{1}, {3}}}, // 2 was never run
		{"LeadingWaitsForItsBatch", true, []int{2, 3}, [2]any{20, nil}, [][]int{{1}, {2, 3}}},
		{"TakenWaitsForItsBatch", true, []int{3, 2}, [2]any{20, nil}, [][]int{{1}, {3, 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedRun()
			c := New(8, g.run)
			first := doAsync(context.Background(), c, 1)
			<-g.started
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := map[int]<-chan [2]any{}
			for i, in := range tc.order {
				callCtx := context.Background()
				if in == 2 {
					callCtx = ctx
				}
				calls[in] = doAsync(callCtx, c, in)
				waitQueued(t, c, i+1)
			}
			if !tc.inFlight {
				cancel() // while call 1's batch still holds: 2 returns by itself
				if r := <-calls[2]; r != tc.want2 {
					t.Fatalf("call 2: %v, want %v", r, tc.want2)
				}
			}
			g.release <- struct{}{}
			if r := <-first; r[0] != 10 || r[1] != nil {
				t.Fatalf("call 1: %v", r)
			}
			<-g.started // the batch of what was queued is in flight
			if tc.inFlight {
				cancel()
				select {
				case r := <-calls[2]:
					t.Fatalf("a call in a batch in flight returned %v before its batch", r)
				case <-time.After(20 * time.Millisecond):
				}
			}
			g.release <- struct{}{}
			if tc.inFlight {
				if r := <-calls[2]; r != tc.want2 {
					t.Fatalf("call 2: %v, want its batch's answer %v", r, tc.want2)
				}
			}
			if r := <-calls[3]; r[0] != 30 || r[1] != nil {
				t.Fatalf("call 3: %v", r)
			}
			if got := g.seen(); !slices.EqualFunc(got, tc.batches, slices.Equal) {
				t.Fatalf("batches %v, want %v", got, tc.batches)
			}
		})
	}
}
