package offsets

import (
	"sync"
	"sync/atomic"
)

// Pause is the application's pause of one claimed partition
// (HandlerGroup.Pause and PauseAll). It belongs to the claim: a claim that
// starts later is not paused, as under sarama. The worker holds the next
// message back while it is set, whichever path fetched it (the group's
// batch fetches or sarama's partition consumer), so nothing fetched after
// the pause reaches the handler before the resume; fetching stops with it,
// since a batch feed fetches at most one batch ahead, and sarama's consumer
// is paused as well.
type Pause struct {
	paused  atomic.Bool // the hot path's check
	mu      sync.Mutex
	resumed chan struct{} // closed by resume; nil while not paused
}

// Set pauses (true) or resumes (false).
func (p *Pause) Set(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case paused && p.resumed == nil:
		p.resumed = make(chan struct{})
	case !paused && p.resumed != nil:
		close(p.resumed)
		p.resumed = nil
	}
	p.paused.Store(paused)
}

// Held returns a channel closed at the resume while the partition is
// paused, and nil otherwise.
func (p *Pause) Held() <-chan struct{} {
	if !p.paused.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resumed
}
