package consumergroup

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
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

// sessionFence enforces DESIGN rule 6. ZooKeeper expires a session once the
// server has not heard from the client for the session timeout, but the
// client learns of trouble late (go-zookeeper notices a silent connection
// only after 2/3 of the timeout) and of the expiry only when it reconnects.
// So the fence measures what it can trust: the time since the last request
// that ZooKeeper answered. It probes every timeout/10 (at most a quarter
// of the fence time, one probe in flight) and pauses delivery
// once that age exceeds Session.SelfFenceFraction of the timeout, well
// before anyone else can claim our partitions. When the session is replaced
// after an expiry it tells the manage loop, which drops every partition
// without committing and registers again.
type sessionFence struct {
	cg       *ConsumerGroup
	after    time.Duration // pause when the last answer is older than this
	interval time.Duration // probe period
	expired  chan struct{} // one token per session replacement, read by manage
	now      func() time.Time
}

func newSessionFence(cg *ConsumerGroup) *sessionFence {
	timeout := cg.config.Zookeeper.Timeout
	after := cg.config.selfFenceAfter()
	return &sessionFence{
		cg:    cg,
		after: after,
		// Answers normally come one interval apart, so the interval must be
		// well below after or a small SelfFenceFraction would fence at
		// every tick.
		interval: max(min(timeout/10, after/4), 10*time.Millisecond),
		expired:  make(chan struct{}, 1),
		now:      time.Now,
	}
}

// run probes until Close. One probe is in flight at a time.
func (f *sessionFence) run() {
	sess, changed := f.cg.kazoo.Session()
	generation := sess.Generation
	lastOK := f.now()
	probeDone := make(chan time.Time, 1)
	inFlight := false
	probe := func() { // at most one in flight, started on a tick: not back to back
		if inFlight {
			return
		}
		inFlight = true
		go func() {
			started := f.now()
			if _, err := f.cg.group.Exists(); err == nil {
				probeDone <- started
			} else {
				probeDone <- time.Time{}
			}
		}()
	}
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	probe()
	for {
		select {
		case <-f.cg.stopper:
			// A probe in flight returns once Close closes the session; its
			// result goes into the buffered channel.
			return
		case started := <-probeDone:
			inFlight = false
			if !started.IsZero() && started.After(lastOK) {
				lastOK = started
			}
		case <-changed:
			sess, changed = f.cg.kazoo.Session()
			if sess.Generation != generation && sess.Status == kazoo.SessionConnected {
				generation = sess.Generation
				f.cg.log.Warn("ZooKeeper session expired and was replaced; dropping every partition", "session", sess.ID)
				select {
				case f.expired <- struct{}{}:
				default:
				}
			}
			continue
		case <-tick.C:
			probe()
		}
		age := f.now().Sub(lastOK)
		fenced := age > f.after
		if f.cg.gate.set(fenced) {
			if fenced {
				f.cg.log.Warn("no answer from ZooKeeper; fenced: delivery paused", "since", age)
			} else {
				f.cg.log.Info("ZooKeeper answers again; delivery resumed")
			}
		}
	}
}

// sendIf hands m to the application unless ctx ends first, waiting while
// the gate is paused; m may be handed over only while valid() holds (nil:
// always). valid is called before the first attempt and again
// after every pause: a message held back while the instance was fenced off
// must not go out when the gate opens again if the session that claimed its
// partition was replaced meanwhile (DESIGN rule 6); the gate opens as soon
// as ZooKeeper answers, which may be before the manage loop has stopped the
// old session's partitions. It reports whether m was delivered and, if not,
// whether valid failed (invalid) rather than ctx ending.
func (g *deliveryGate) sendIf(ctx context.Context, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage, valid func() bool) (delivered, invalid bool) {
	// Fast path: the gate is open and the reader is waiting.
	if paused, _, _ := g.state(); !paused && ctx.Err() == nil {
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
			case <-ctx.Done():
				return false, false
			}
		}
		select {
		case out <- m:
			return true, false
		case <-pauseC:
		case <-ctx.Done():
			return false, false
		}
	}
}
