// Package coalesce runs concurrent calls in batches, as a group commit
// does: the claims, releases and fenced offset commits of a rebalance go
// to ZooKeeper in a few transactions instead of one each
// (docs/coordination.md#claims-and-releases-in-batches).
package coalesce

import (
	"context"
	"sync"
)

// Coalescer runs concurrent calls in batches, as a group commit does: a
// call that finds nothing in flight runs at once, alone; calls that arrive
// while a batch is in flight queue, and the next batch takes them all (up
// to max). A lone caller waits no longer than before, and a rebalance that
// claims, commits or releases hundreds of partitions at once sends a few
// requests instead of hundreds.
//
// It starts no goroutine: the caller at the head of the queue runs the
// batch, then hands the lead to the head of the next one. A queued call
// whose ctx ends before a batch takes it is withdrawn, never run; once
// taken, it waits for its batch, which is never abandoned.
type Coalescer[In, Out any] struct {
	run func([]In) []Out // one answer per input, in order
	max int              // the most inputs in one batch

	mu    sync.Mutex
	busy  bool // a caller leads: runs a batch or is about to
	queue []*pending[In, Out]
}

type pendingState int

const (
	queued  pendingState = iota // waiting for a batch
	leading                     // at the head: runs the next batch
	taken                       // in a batch
)

type pending[In, Out any] struct {
	in    In
	out   Out
	state pendingState  // under the Coalescer's mu
	wake  chan struct{} // a token when it leads, or its batch is done
}

// New returns a Coalescer that runs batches of at most max calls through
// run, which must return one answer per input, in order.
func New[In, Out any](max int, run func([]In) []Out) *Coalescer[In, Out] {
	return &Coalescer[In, Out]{run: run, max: max}
}

// Do runs in in a batch and returns its answer, or ctx's error if ctx
// ended while the call was still queued (it was then never run).
func (c *Coalescer[In, Out]) Do(ctx context.Context, in In) (Out, error) {
	p := &pending[In, Out]{in: in, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if !c.busy {
		c.busy = true
		p.state = leading
	}
	st := p.state
	c.mu.Unlock()

	if st != leading {
		select {
		case <-p.wake:
		case <-ctx.Done():
			c.mu.Lock()
			if p.state == queued {
				c.withdraw(p)
				c.mu.Unlock()
				var zero Out
				return zero, ctx.Err()
			}
			c.mu.Unlock()
			<-p.wake // leading, or taken: its batch must be waited for
		}
		c.mu.Lock()
		st = p.state
		c.mu.Unlock()
	}
	if st == leading {
		c.runBatch() // p heads the queue, so the batch holds it
	}
	return p.out, nil
}

// withdraw removes p, still queued, from the queue; c.mu is held.
func (c *Coalescer[In, Out]) withdraw(p *pending[In, Out]) {
	for i, q := range c.queue {
		if q == p {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return
		}
	}
}

// runBatch runs the head of the queue (up to max calls) as one batch,
// answers them, and hands the lead to the next call queued, if any.
func (c *Coalescer[In, Out]) runBatch() {
	c.mu.Lock()
	n := min(len(c.queue), c.max)
	batch := make([]*pending[In, Out], n)
	copy(batch, c.queue)
	c.queue = append(c.queue[:0:0], c.queue[n:]...)
	ins := make([]In, n)
	for i, p := range batch {
		p.state = taken
		ins[i] = p.in
	}
	c.mu.Unlock()

	outs := c.run(ins)
	for i, p := range batch {
		p.out = outs[i]
		p.wake <- struct{}{}
	}

	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.state = leading
		next.wake <- struct{}{}
	} else {
		c.busy = false
	}
	c.mu.Unlock()
}
