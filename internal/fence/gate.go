package fence

import (
	"sync"
	"sync/atomic"
	"time"

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

	// base and until: the gate pauses by itself once time.Since(base)
	// reaches until (0: never), the moment the fence's deadline timer is
	// armed for. After the process was stopped (SIGSTOP, a descheduled VM)
	// past it, a worker may run before the timer's goroutine does; without
	// this check it would hand out what it holds meanwhile. See
	// docs/fence.md, "The gate".
	base  time.Time
	until atomic.Int64
}

// gateListener is told when the gate pauses.
type gateListener struct{ paused func() }

type gateState struct {
	paused  bool
	resumeC chan struct{} // closed while open
}

// NewGate returns an open gate.
func NewGate() *Gate {
	g := &Gate{base: time.Now()}
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

// PauseAt makes the gate pause by itself at t, whoever runs first then:
// the fence arms its deadline timer for the same moment, and calls it
// again each time the moment moves. The monotonic clock decides, which
// runs on while the process is stopped.
func (g *Gate) PauseAt(t time.Time) {
	g.until.Store(max(int64(t.Sub(g.base)), 1))
}

// overdue reports whether the moment set by PauseAt has passed.
func (g *Gate) overdue() bool {
	u := g.until.Load()
	return u != 0 && int64(time.Since(g.base)) >= u
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

// Outlet is where a gated send hands a message: a channel of its own
// (Chan), or a channel several senders share that can take messages back
// (the worker's Outbox).
type Outlet interface {
	// TrySend hands m over if it can without waiting.
	TrySend(m *sarama.ConsumerMessage) bool
	// Send hands m over, waiting for room or a reader, and returns false,
	// with m not handed over, once interrupt is closed first.
	Send(interrupt <-chan struct{}, m *sarama.ConsumerMessage) bool
}

// Chan is a channel as an Outlet.
type Chan chan<- *sarama.ConsumerMessage

// TrySend hands m over if a reader waits or the buffer has room.
func (c Chan) TrySend(m *sarama.ConsumerMessage) bool {
	select {
	case c <- m:
		return true
	default:
		return false
	}
}

// Send hands m over, or returns false once interrupt is closed first.
func (c Chan) Send(interrupt <-chan struct{}, m *sarama.ConsumerMessage) bool {
	select {
	case c <- m:
		return true
	case <-interrupt:
		return false
	}
}

// SendTo hands m to the application through out unless interrupt is
// closed first, waiting while the gate is paused; m goes out only while
// valid() holds (nil: always), checked before the first attempt and after
// every pause, since the claim may have died with a replaced session. A
// pause does not end a send waiting for a reader: the caller listens (see
// Listen), closes interrupt, and calls again. It reports whether m was
// delivered and, if not, whether valid failed (invalid). See
// docs/fence.md, "The gate".
func (g *Gate) SendTo(interrupt <-chan struct{}, out Outlet, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool) {
	for {
		if valid != nil && !valid() {
			return false, true
		}
		s := g.cur.Load()
		if !s.paused && g.overdue() {
			g.Set(true) // the fence's timer is late: pause now; the fence opens it again
			continue
		}
		if s.paused {
			select {
			case <-s.resumeC:
				continue
			case <-interrupt:
				return false, false
			}
		}
		if out.TrySend(m) { // the fast path: a reader is waiting, or room in a buffer
			return true, false
		}
		return out.Send(interrupt, m), false
	}
}
