package fetch

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// feedBudget bounds the bytes the group's batch feeds hold in batches
// fetched but not handed out yet. A partition holding nothing always
// fetches (it can never stall); one holding a batch fetches ahead only
// while the budget has room for a whole fetch. See docs/batch-feed.md,
// "The feed budget".
//
// Partitions waiting for room queue; bytes given back go to those they
// can serve, in the order they came, and wake no other: behind a slow
// reader most of a large group waits here, and waking every one of them
// at each batch handed out cost them all a futile turn.
type feedBudget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	waiting []*budgetWait // in the order they came

	wakeups atomic.Int64 // waits in reserve that ended (tests)
}

// budgetWait is one partition waiting in reserve.
type budgetWait struct {
	h       *feedHold
	n       int64
	granted int64         // reserved for it when it was let go (under mu)
	done    chan struct{} // closed when it is let go
}

// feedHold is what one partition's feed holds of a feedBudget. Its field
// is guarded by the budget's mutex.
type feedHold struct{ held int64 }

func newFeedBudget(limit int64) *feedBudget {
	return &feedBudget{limit: limit}
}

// reserve waits until h may fetch n bytes ahead: at once when h holds
// nothing (nothing is reserved then: it returns 0), or once the budget has
// room for n (reserved for h: it returns n). It returns false when ctx
// ends first.
func (b *feedBudget) reserve(ctx context.Context, h *feedHold, n int64) (int64, bool) {
	b.mu.Lock()
	if h.held == 0 {
		b.mu.Unlock()
		return 0, true
	}
	if b.used+n <= b.limit {
		b.take(h, n)
		b.mu.Unlock()
		return n, true
	}
	w := &budgetWait{h: h, n: n, done: make(chan struct{})}
	b.waiting = append(b.waiting, w)
	b.mu.Unlock()
	select {
	case <-w.done:
		b.wakeups.Add(1)
		return w.granted, true
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.done: // let go meanwhile: give its reservation back
		b.giveBack(h, w.granted)
	default:
		b.waiting = slices.DeleteFunc(b.waiting, func(x *budgetWait) bool { return x == w })
	}
	return 0, false
}

// take reserves n for h. b.mu is held.
func (b *feedBudget) take(h *feedHold, n int64) {
	b.used += n
	h.held += n
}

// settle replaces what reserve reserved for h's fetch by what the fetch
// returned: actual bytes, held until released.
func (b *feedBudget) settle(h *feedHold, reserved, actual int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += actual - reserved
	h.held += actual - reserved
	if actual < reserved {
		b.letGo()
	}
}

// release gives back n bytes h held: a batch handed out, or dropped.
func (b *feedBudget) release(h *feedHold, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveBack(h, n)
}

// releaseAll gives back everything h holds (a feed stopped).
func (b *feedBudget) releaseAll(h *feedHold) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveBack(h, h.held)
}

// giveBack returns n of what h holds to the budget and lets go the
// waiting partitions that can go on now. b.mu is held.
func (b *feedBudget) giveBack(h *feedHold, n int64) {
	b.used -= n
	h.held -= n
	b.letGo()
}

// letGo lets go, in the order they came, the waiting partitions that hold
// nothing any more and those the budget has room for now, reserving for
// the latter; the others keep waiting, unwoken. b.mu is held.
func (b *feedBudget) letGo() {
	kept := b.waiting[:0]
	for _, w := range b.waiting {
		switch {
		case w.h.held == 0:
		case b.used+w.n <= b.limit:
			b.take(w.h, w.n)
			w.granted = w.n
		default:
			kept = append(kept, w)
			continue
		}
		close(w.done)
	}
	clear(b.waiting[len(kept):])
	b.waiting = kept
}

// heldBytes is what msgs hold against the budget: their keys, values and
// headers.
func heldBytes(msgs []*sarama.ConsumerMessage) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Key) + len(m.Value))
		for _, h := range m.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	return n
}
