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
	mu  sync.Mutex // serialises set
	cur atomic.Pointer[gateState]
}

type gateState struct {
	paused  bool
	pauseC  chan struct{} // closed while paused
	resumeC chan struct{} // closed while open
}

func newDeliveryGate() *deliveryGate {
	g := &deliveryGate{}
	open := make(chan struct{})
	close(open)
	g.cur.Store(&gateState{pauseC: make(chan struct{}), resumeC: open})
	return g
}

// state returns whether the gate is paused, a channel closed once it
// pauses, and one closed once it opens.
func (g *deliveryGate) state() (paused bool, pauseC, resumeC <-chan struct{}) {
	s := g.cur.Load()
	return s.paused, s.pauseC, s.resumeC
}

// paused reports whether the gate is paused.
func (g *deliveryGate) paused() bool { return g.cur.Load().paused }

func (g *deliveryGate) set(paused bool) (changed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.cur.Load()
	if old.paused == paused {
		return false
	}
	if paused {
		close(old.pauseC)
		g.cur.Store(&gateState{paused: true, pauseC: old.pauseC, resumeC: make(chan struct{})})
	} else {
		close(old.resumeC)
		g.cur.Store(&gateState{pauseC: make(chan struct{}), resumeC: old.resumeC})
	}
	return true
}

// sendIf hands m to the application unless interrupt is closed first, waiting while
// the gate is paused; m may be handed over only while valid() holds (nil:
// always). valid is called before the first attempt and again
// after every pause: a message held back while the instance was fenced off
// must not go out when the gate opens again if the session that claimed its
// partition was replaced meanwhile: the claim died with that session, and
// another instance may own the partition by now. The gate opens as soon
// as ZooKeeper answers, which may be before the manage loop has stopped the
// old session's partitions. It reports whether m was delivered and, if not,
// whether valid failed (invalid) rather than interrupt closing.
func (g *deliveryGate) sendIf(interrupt <-chan struct{}, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool) {
	// Fast path: the gate is open and the reader is waiting. The caller
	// checks for an interruption before it calls.
	if paused, _, _ := g.state(); !paused {
		if valid != nil && !valid() {
			return false, true
		}
		select {
		case out <- m:
			return true, false
		default:
		}
	}
	for {
		if valid != nil && !valid() {
			return false, true
		}
		paused, pauseC, resumeC := g.state()
		if paused {
			select {
			case <-resumeC:
				continue
			case <-interrupt:
				return false, false
			}
		}
		select {
		case out <- m:
			return true, false
		case <-pauseC:
		case <-interrupt:
			return false, false
		}
	}
}

// sendOrPause is sendIf for a buffered channel: instead of waiting while
// the gate is paused, it returns at once with paused set, so the caller
// can take back what the buffer still holds before it waits (see
// partitionWorker.recall). A message in a buffer is not handed over yet,
// and must not be read while the instance is fenced off.
func (g *deliveryGate) sendOrPause(interrupt <-chan struct{}, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid, paused bool) {
	s := g.cur.Load()
	if s.paused {
		return false, false, true
	}
	if valid != nil && !valid() {
		return false, true, false
	}
	select {
	case out <- m:
		return true, false, false
	default:
	}
	select {
	case out <- m:
		return true, false, false
	case <-s.pauseC:
		return false, false, true
	case <-interrupt:
		return false, false, false
	}
}

// awaitOpen waits until the gate is open; false when interrupt closes first.
func (g *deliveryGate) awaitOpen(interrupt <-chan struct{}) bool {
	for {
		paused, _, resumeC := g.state()
		if !paused {
			return true
		}
		select {
		case <-resumeC:
		case <-interrupt:
			return false
		}
	}
}
