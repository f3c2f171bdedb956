package fence

import (
	"log/slog"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// Fence pauses delivery before this instance's ZooKeeper session can
// expire, that is before another instance can claim its partitions, and
// tells the manage loop when an expired session was replaced. It trusts
// only probes the ZooKeeper leader answers, and pauses on a timer at
// lastOK + budget (a fraction of the granted timeout). See docs/fence.md.
type Fence struct {
	fraction float64
	confirm  func() error
	timeout  func() time.Duration
	session  func() (kazoo.Session, <-chan struct{})
	gate     *Gate
	stop     <-chan struct{}
	log      *slog.Logger
	expired  chan struct{} // one token per session replacement
	onPause  func()
	onResume func()
}

// Session is the ZooKeeper session the fence watches; *kazoo.Kazoo is one.
type Session interface {
	// ConfirmSession asks a question only the ZooKeeper leader answers.
	ConfirmSession() error
	// SessionTimeout is the session timeout the server granted.
	SessionTimeout() time.Duration
	// Session returns the session's state and a channel closed when it
	// changes.
	Session() (kazoo.Session, <-chan struct{})
}

// Deps is what a Fence works with.
type Deps struct {
	Session  Session
	Gate     *Gate           // paused and opened by the fence alone
	Stop     <-chan struct{} // closed when the group closes: Run returns
	Log      *slog.Logger
	OnPause  func() // called at each pause (a metric); may be nil
	OnResume func() // called each time delivery resumes after a pause; may be nil
}

// New returns a fence over deps.Session that pauses deps.Gate once
// fraction (the group's Session.SelfFenceFraction) of the granted session
// timeout has passed without the leader vouching for the session. It does
// nothing until Run.
func New(fraction float64, deps Deps) *Fence {
	return &Fence{
		fraction: fraction,
		confirm:  deps.Session.ConfirmSession,
		timeout:  deps.Session.SessionTimeout,
		session:  deps.Session.Session,
		gate:     deps.Gate,
		stop:     deps.Stop,
		log:      deps.Log,
		expired:  make(chan struct{}, 1),
		onPause:  deps.OnPause,
		onResume: deps.OnResume,
	}
}

// Expired receives a token each time the session expired and was
// replaced: every claim of the old session is gone. Tokens coalesce.
func (f *Fence) Expired() <-chan struct{} { return f.expired }

// fenceLimits are the fence's durations for one granted session timeout.
type fenceLimits struct {
	budget   time.Duration // pause this long after lastOK
	interval time.Duration // probe period
	lag      time.Duration // how long the leader may take to hear of a request: T/4
}

func (f *Fence) limits() fenceLimits {
	t := f.timeout()
	budget := time.Duration(float64(t) * f.fraction)
	return fenceLimits{
		budget: budget,
		// Well below the budget, or a small fraction pauses at every probe.
		interval: max(min(t/10, budget/4), 10*time.Millisecond),
		lag:      t / 4,
	}
}

// probeResult is one answered or failed probe.
type probeResult struct {
	sent, answered time.Time
	err            error
}

// leaderView tracks how recent a request of ours the leader must have seen
// (see docs/fence.md, "The budget proof").
type leaderView struct {
	proven  time.Time     // the leader has seen a request sent no earlier
	pending []probeResult // answered probes not yet proven seen
}

// saw records that the leader has seen the session at t.
func (v *leaderView) saw(t time.Time) {
	if t.After(v.proven) {
		v.proven = t
	}
}

// answer records an answered probe and returns how far lastOK may move.
func (v *leaderView) answer(p probeResult, l fenceLimits) time.Time {
	cut := p.sent.Add(-l.lag)
	kept := v.pending[:0]
	for _, q := range v.pending {
		if q.answered.After(cut) {
			kept = append(kept, q)
		} else {
			v.saw(q.sent)
		}
	}
	v.pending = append(kept, p)
	if v.proven.IsZero() {
		return time.Time{}
	}
	return minTime(p.sent, v.proven.Add(l.lag+l.interval))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Run probes and keeps the gate until Deps.Stop is closed; it then
// returns once its probe in flight, if any, has returned (closing the
// session answers it). It alone owns the fence's state.
func (f *Fence) Run() {
	sess, changed := f.session()
	generation := sess.Generation
	lim := f.limits()
	var view leaderView
	var lastOK time.Time // zero: pause at once
	if sess.Status == kazoo.SessionConnected {
		view.saw(sess.Since)
		lastOK = sess.Since
	}

	done := make(chan probeResult, 1)
	inFlight := false
	probe := func() {
		if inFlight {
			return
		}
		inFlight = true
		go func() {
			sent := time.Now()
			err := f.confirm()
			done <- probeResult{sent: sent, answered: time.Now(), err: err}
		}()
	}
	tick := time.NewTicker(lim.interval)
	defer tick.Stop()
	deadline := time.NewTimer(lim.budget)
	defer deadline.Stop()
	// enforce pauses delivery once lastOK + budget has passed, and otherwise
	// opens it and arms the deadline timer for that moment.
	paused := false // as the fence last told: the gate may pause itself first (PauseAt)
	enforce := func() {
		until := lastOK.Add(lim.budget)
		left := time.Until(until)
		fenced := left <= 0
		if !fenced {
			deadline.Reset(left)
		}
		f.gate.PauseAt(until) // before opening: the gate never opens with a deadline passed
		f.gate.Set(fenced)
		if fenced != paused {
			paused = fenced
			if fenced {
				if f.onPause != nil {
					f.onPause()
				}
				f.log.Warn("the ZooKeeper leader has not vouched for the session; fenced: delivery paused", "since", time.Since(lastOK))
			} else {
				if f.onResume != nil {
					f.onResume()
				}
				f.log.Info("the ZooKeeper leader vouches for the session again; delivery resumed")
			}
		}
	}

	enforce()
	probe()
	for {
		select {
		case <-f.stop:
			// A probe in flight returns once Close closes the session:
			// waiting for it leaves no goroutine of the fence behind.
			if inFlight {
				<-done
			}
			return
		case <-tick.C:
			probe()
			continue
		case p := <-done:
			inFlight = false
			if p.err != nil {
				continue
			}
			if ok := view.answer(p, lim); ok.After(lastOK) {
				lastOK = ok
			}
		case <-changed:
			sess, changed = f.session()
			if sess.Status != kazoo.SessionConnected {
				continue
			}
			// The server may grant another timeout; the leader has just
			// vouched for the session.
			lim = f.limits()
			tick.Reset(lim.interval)
			view.saw(sess.Since)
			if sess.Since.After(lastOK) {
				lastOK = sess.Since
			}
			if sess.Generation != generation {
				generation = sess.Generation
				f.log.Warn("ZooKeeper session expired and was replaced; dropping every partition", "session", sess.ID)
				select {
				case f.expired <- struct{}{}:
				default:
				}
			}
		case <-deadline.C:
		}
		enforce()
	}
}
