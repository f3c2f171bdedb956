package consumergroup

import (
	"log/slog"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// sessionFence pauses delivery before this instance's ZooKeeper session can
// expire, that is before another instance can claim its partitions, and
// tells the manage loop when an expired session was replaced.
//
// Only the leader of the ensemble expires sessions, and it can only be
// trusted as far as its own answers go: a follower cut off from the leader
// keeps answering reads for a while, and the client notices a silent
// connection late (go-zookeeper after 2/3 of the timeout) and an expiry only
// when it reconnects. So the fence probes with kazoo.ConfirmSession, which
// only an answer the leader stands behind completes; one probe is in flight
// at a time, started every interval (a tenth of the timeout, at most a
// quarter of the budget). lastOK is the time the last answered probe was
// sent, and a timer armed at lastOK + budget pauses delivery, whether or not
// a probe is due then; budget is Session.SelfFenceFraction of the timeout
// the server granted (kazoo.SessionTimeout), read again at every
// (re)connection. An answer that moves lastOK past the present opens the
// gate again.
//
// # Budget
//
// The leader expires a session at the first expiry-bucket boundary (buckets
// are tickTime wide) after the last time it touched it plus the timeout T,
// so never before that time + T. It touches the session when it sees a
// request of the session itself, or (re)connects it; for a client of a
// follower, when the follower reports the session's requests in its reply
// to one of the leader's pings, sent every tickTime/2. The follower forwards
// a probe to the leader on the link that carries its ping replies, so when
// the leader answers the probe it has processed every reply sent before:
// the last one answers a ping that reached the follower at most tickTime/2
// before the probe did, and covers every request of ours the follower had
// received by then. So the leader has touched the session no earlier than
// the send time of any probe answered at least tickTime/2 before the new
// probe was sent. The server's default minSessionTimeout is 2 ticks, so a
// granted T is at least 2 x tickTime, and tickTime/2 <= T/4 (the lag).
// Network delays come out of the margin below.
//
// The fence keeps proven, the send time of the latest probe the leader is
// thus known to have seen (or the moment of a connection, which the leader
// itself grants), and moves lastOK only up to proven + lag + interval:
// while probes answer every interval this is the send time of the last
// answered probe, and after a gap in the answers delivery resumes only once
// they have flowed for about a lag. Hence the earliest expiry is
//
//	lastOK + T - T/4 - interval >= lastOK + 0.65 T     (interval <= T/10)
//
// while the pause lands at lastOK + SelfFenceFraction x T; Validate caps the
// fraction at maxSelfFenceFraction (0.6), which leaves at least 0.05 T for
// the timer, network jitter and the hand-over already in progress. A client
// of the leader or of a standalone server is touched directly, its earliest
// expiry is lastOK + T. The guarantee assumes that this process is not
// paused (GC, a VM descheduled) for longer than what is left of the budget:
// a paused process cannot pause its own delivery.
//
// Worst case for a client of a follower while probes answer every
// interval, counted from the send time of the last answered probe: the
// pause, the earliest expiry (T - tickTime/2 - interval), and the slack.
// After a gap in the answers the slack is never below (0.65 - fraction) T.
//
//	T    tickTime  interval  fraction 0.5           fraction 0.6 (maximum)
//	4 s  500 ms    400 ms    2.0 s < 3.35 s (1.35)  2.4 s < 3.35 s (0.95)
//	4 s  2000 ms   400 ms    2.0 s < 2.6 s  (0.6)   2.4 s < 2.6 s  (0.2)
//	6 s  500 ms    600 ms    3.0 s < 5.15 s (2.15)  3.6 s < 5.15 s (1.55)
//	6 s  2000 ms   600 ms    3.0 s < 4.4 s  (1.4)   3.6 s < 4.4 s  (0.8)
type sessionFence struct {
	fraction float64                                 // Session.SelfFenceFraction
	confirm  func() error                            // kazoo.ConfirmSession
	timeout  func() time.Duration                    // kazoo.SessionTimeout
	session  func() (kazoo.Session, <-chan struct{}) // kazoo.Session
	gate     *deliveryGate
	stop     <-chan struct{} // closed by Close
	log      *slog.Logger
	expired  chan struct{} // one token per session replacement, read by manage
	onPause  func()        // called at each pause (a metric)
}

func newSessionFence(cg *ConsumerGroup) *sessionFence {
	return &sessionFence{
		fraction: cg.config.Session.SelfFenceFraction,
		confirm:  cg.kazoo.ConfirmSession,
		timeout:  cg.kazoo.SessionTimeout,
		session:  cg.kazoo.Session,
		gate:     cg.gate,
		stop:     cg.stopper,
		log:      cg.log,
		expired:  make(chan struct{}, 1),
		onPause:  func() { cg.met().fencePauses.Inc(1) },
	}
}

// fenceLimits are the fence's durations for one granted session timeout.
type fenceLimits struct {
	budget   time.Duration // pause this long after lastOK
	interval time.Duration // probe period
	lag      time.Duration // how long the leader may take to hear of a request: T/4
}

func (f *sessionFence) limits() fenceLimits {
	t := f.timeout()
	budget := time.Duration(float64(t) * f.fraction)
	return fenceLimits{
		budget: budget,
		// Answers normally come one interval apart, so the interval must be
		// well below the budget or a small fraction would pause at every
		// probe.
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
// (see sessionFence).
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

// run probes and keeps the gate until stop is closed. It alone owns the
// fence's state.
func (f *sessionFence) run() {
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
	enforce := func() {
		left := time.Until(lastOK.Add(lim.budget))
		fenced := left <= 0
		if !fenced {
			deadline.Reset(left)
		}
		if f.gate.set(fenced) {
			if fenced {
				if f.onPause != nil {
					f.onPause()
				}
				f.log.Warn("the ZooKeeper leader has not vouched for the session; fenced: delivery paused", "since", time.Since(lastOK))
			} else {
				f.log.Info("the ZooKeeper leader vouches for the session again; delivery resumed")
			}
		}
	}

	enforce()
	probe()
	for {
		select {
		case <-f.stop:
			// A probe in flight returns once Close closes the session; its
			// result goes into the buffered channel.
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
			// Connected, or reconnected: the server may grant another
			// timeout, and the leader has just vouched for the session
			// (created or revalidated it).
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
