package fetch

import (
	"context"
	"sync"

	"github.com/IBM/sarama"
)

// feedBudget bounds the bytes the group's batch feeds hold in batches
// fetched but not handed out yet. A partition holding nothing always
// fetches (it can never stall); one holding a batch fetches ahead only
// while the budget has room for a whole fetch. See docs/batch-feed.md,
// "The feed budget".
type feedBudget struct {
	limit int64

	mu    sync.Mutex
	used  int64
	freed chan struct{} // closed, and replaced, whenever bytes are given back
}

// feedHold is what one partition's feed holds of a feedBudget. Its field
// is guarded by the budget's mutex.
type feedHold struct{ held int64 }

func newFeedBudget(limit int64) *feedBudget {
	return &feedBudget{limit: limit, freed: make(chan struct{})}
}

// reserve waits until h may fetch n bytes ahead: at once when h holds
// nothing (nothing is reserved then: it returns 0), or once the budget has
// room for n (reserved for h: it returns n). It returns false when ctx
// ends first.
func (b *feedBudget) reserve(ctx context.Context, h *feedHold, n int64) (int64, bool) {
	for {
		b.mu.Lock()
		if h.held == 0 {
			b.mu.Unlock()
			return 0, true
		}
		if b.used+n <= b.limit {
			b.used += n
			h.held += n
			b.mu.Unlock()
			return n, true
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// settle replaces what reserve reserved for h's fetch by what the fetch
// returned: actual bytes, held until released.
func (b *feedBudget) settle(h *feedHold, reserved, actual int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += actual - reserved
	h.held += actual - reserved
	if actual < reserved {
		b.wake()
	}
}

// release gives back n bytes h held: a batch handed out, or dropped.
func (b *feedBudget) release(h *feedHold, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	h.held -= n
	b.wake()
}

// releaseAll gives back everything h holds (a feed stopped).
func (b *feedBudget) releaseAll(h *feedHold) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= h.held
	h.held = 0
	b.wake()
}

// wake tells the partitions waiting in reserve that bytes were given
// back. b.mu is held.
func (b *feedBudget) wake() {
	close(b.freed)
	b.freed = make(chan struct{})
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
