package consumergroup

import (
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// deliveryGate lets partition consumers hand messages to the application
// only while the instance is not fenced off from ZooKeeper. Its state is an
// immutable value behind an atomic pointer, so the per-message check takes
// no lock; set, called by the session fence only, swaps it.
type deliveryGate struct {
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

func newDeliveryGate() *deliveryGate {
	g := &deliveryGate{}
	open := make(chan struct{})
	close(open)
	g.cur.Store(&gateState{resumeC: open})
	return g
}

// paused reports whether the gate is paused.
func (g *deliveryGate) paused() bool { return g.cur.Load().paused }

// listen calls paused (which must not block) each time the gate pauses,
// until the returned stop is called. A partition worker listens while it
// hands messages out: a pause cuts a hand-over short through the worker's
// own events, so waiting senders never share a channel of the gate.
func (g *deliveryGate) listen(paused func()) (stop func()) {
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

func (g *deliveryGate) set(paused bool) (changed bool) {
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

// sendIf hands m to the application unless interrupt is closed first,
// waiting while the gate is paused; m may be handed over only while valid()
// holds (nil: always). A pause does not end a send that waits for a
// reader by itself: the caller listens to the gate (see listen) and closes
// interrupt when it pauses, then calls again, and the call waits for the
// gate to open.
//
// valid is called before the first attempt and again after every pause: a
// message held back while the instance was fenced off must not go out when
// the gate opens again if the session that claimed its partition was
// replaced meanwhile: the claim died with that session, and another
// instance may own the partition by now. The gate opens as soon as
// ZooKeeper answers, which may be before the manage loop has stopped the
// old session's partitions. It reports whether m was delivered and, if
// not, whether valid failed (invalid) rather than interrupt closing.
func (g *deliveryGate) sendIf(interrupt <-chan struct{}, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool) {
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
