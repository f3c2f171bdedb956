package fence

import (
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// Gate lets partition workers hand messages to the application only while
// the instance is not fenced off from ZooKeeper. The state sits behind an
// atomic pointer (no lock per message); only the session fence calls Set.
// See docs/fence.md.
type Gate struct {
	mu        sync.Mutex // serialises set and the listeners
	cur       atomic.Pointer[gateState]
	listeners map[*gateListener]struct{}
}

// gateListener is told when the gate pauses.
type gateListener struct{ paused func() }

type gateState struct {
	paused  bool
	resumeC chan struct{} // closed while open
}

// NewGate returns an open gate.
func NewGate() *Gate {
	g := &Gate{}
	open := make(chan struct{})
	close(open)
	g.cur.Store(&gateState{resumeC: open})
	return g
}

// Paused reports whether the gate is paused.
func (g *Gate) Paused() bool { return g.cur.Load().paused }

// Listen calls paused (which must not block) each time the gate pauses,
// until the returned stop is called. A partition worker listens while it
// hands messages out: a pause cuts a hand-over short through the worker's
// own events, so waiting senders never share a channel of the gate.
func (g *Gate) Listen(paused func()) (stop func()) {
	l := &gateListener{paused: paused}
	g.mu.Lock()
	if g.listeners == nil {
		g.listeners = make(map[*gateListener]struct{})
	}
	g.listeners[l] = struct{}{}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		delete(g.listeners, l)
		g.mu.Unlock()
	}
}

// Set pauses or opens the gate and reports whether that changed it. Each
// pause calls the listeners.
func (g *Gate) Set(paused bool) (changed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.cur.Load()
	if old.paused == paused {
		return false
	}
	if paused {
		g.cur.Store(&gateState{paused: true, resumeC: make(chan struct{})})
		for l := range g.listeners {
			l.paused()
		}
	} else {
		close(old.resumeC)
		g.cur.Store(&gateState{resumeC: old.resumeC})
	}
	return true
}

// SendIf hands m to the application unless interrupt is closed first,
// waiting while the gate is paused; m goes out only while valid() holds
// (nil: always), checked before the first attempt and after every pause,
// since the claim may have died with a replaced session. A pause does not
// end a send waiting for a reader: the caller listens (see Listen), closes
// interrupt, and calls again. It reports whether m was delivered and, if
// not, whether valid failed (invalid). See docs/fence.md, "The gate".
func (g *Gate) SendIf(interrupt <-chan struct{}, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool) {
	for {
		if valid != nil && !valid() {
			return false, true
		}
		s := g.cur.Load()
		if s.paused {
			select {
			case <-s.resumeC:
				continue
			case <-interrupt:
				return false, false
			}
		}
		select {
		case out <- m: // the fast path: a reader is waiting, or room in a buffer
			return true, false
		default:
		}
		select {
		case out <- m:
			return true, false
		case <-interrupt:
			return false, false
		}
	}
}
