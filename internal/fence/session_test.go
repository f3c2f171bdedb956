package fence

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// fakeZK stands for the kazoo connection the fence watches: its session,
// the timeout the server granted, and probes that answer at once or hang
// until released.
type fakeZK struct {
	mu      sync.Mutex
	sess    kazoo.Session
	changed chan struct{}
	granted time.Duration
	hang    chan struct{} // non-nil: probes block until it is closed
	fail    bool          // probes return an error
	probes  []time.Time   // when each probe was sent
}

func newFakeZK(granted time.Duration) *fakeZK {
	return &fakeZK{
		sess:    kazoo.Session{Status: kazoo.SessionConnected, ID: 1, Generation: 1, Since: time.Now()},
		changed: make(chan struct{}),
		granted: granted,
	}
}

func (z *fakeZK) Session() (kazoo.Session, <-chan struct{}) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.sess, z.changed
}

func (z *fakeZK) SessionTimeout() time.Duration {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.granted
}

func (z *fakeZK) ConfirmSession() error {
	z.mu.Lock()
	z.probes = append(z.probes, time.Now())
	h, fail := z.hang, z.fail
	z.mu.Unlock()
	if h != nil {
		<-h
	}
	if fail {
		return errors.New("connection lost")
	}
	return nil
}

// hangProbes makes every probe from now on block until release.
func (z *fakeZK) hangProbes() (release func()) {
	h := make(chan struct{})
	z.mu.Lock()
	z.hang = h
	z.mu.Unlock()
	return sync.OnceFunc(func() {
		z.mu.Lock()
		z.hang = nil
		z.mu.Unlock()
		close(h)
	})
}

// setSession changes the session (the status's Since is now) and the
// granted timeout, and wakes the fence.
func (z *fakeZK) setSession(status kazoo.SessionStatus, generation uint64, granted time.Duration) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.sess = kazoo.Session{Status: status, ID: int64(generation), Generation: generation, Since: time.Now()}
	z.granted = granted
	close(z.changed)
	z.changed = make(chan struct{})
}

// startFence runs a fence over z with the given fraction; stop ends it (and
// releases any hanging probe first).
func startFence(z *fakeZK, fraction float64) (f *Fence, stop func()) {
	return startFenceCounting(z, fraction, nil)
}

// fenceCounts counts a fence's pauses and resumptions (Deps.OnPause,
// Deps.OnResume).
type fenceCounts struct{ pauses, resumes atomic.Int32 }

// startFenceCounting is startFence, counting in c (nil: not counted).
func startFenceCounting(z *fakeZK, fraction float64, c *fenceCounts) (f *Fence, stop func()) {
	stopC := make(chan struct{})
	deps := Deps{Session: z, Gate: NewGate(), Stop: stopC, Log: slog.New(slog.DiscardHandler)}
	if c != nil {
		deps.OnPause = func() { c.pauses.Add(1) }
		deps.OnResume = func() { c.resumes.Add(1) }
	}
	f = New(fraction, deps)
	done := make(chan struct{})
	go func() { f.Run(); close(done) }()
	return f, func() {
		z.mu.Lock()
		if z.hang != nil {
			close(z.hang)
			z.hang = nil
		}
		z.mu.Unlock()
		close(stopC)
		<-done
	}
}

func (f *Fence) paused() bool {
	return f.gate.Paused()
}

// at sleeps until start+d and lets every goroutine of the bubble settle.
func at(start time.Time, d time.Duration) {
	time.Sleep(time.Until(start.Add(d)))
	synctest.Wait()
}

// The pause lands exactly budget after the last answered probe was sent,
// although every later probe hangs and no probe is due at that moment
// (probes go every 400 ms; the deadline falls between two of them).
func TestSessionFencePausesOnDeadlineWhileProbesHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		z := newFakeZK(4 * time.Second) // budget 2 s, interval 400 ms, lag 1 s
		f, stop := startFence(z, 0.5)
		defer stop()

		// Probes at 0, 0.4 and 0.8 s answer; from 1.2 s on they hang.
		at(start, time.Second)
		z.hangProbes()
		at(start, 1300*time.Millisecond)
		if n := len(z.probes); n != 4 {
			t.Fatalf("%d probes by 1.3 s, want 4 (0, 0.4, 0.8, 1.2 s)", n)
		}

		// lastOK = 0.8 s: the pause is due at 2.8 s, not at the tick of 3.2 s
		// when the last answer is first seen older than the budget.
		at(start, 2800*time.Millisecond-time.Nanosecond)
		if f.paused() {
			t.Fatal("paused before lastOK + budget")
		}
		at(start, 2800*time.Millisecond)
		if !f.paused() {
			t.Fatal("not paused at lastOK + budget (0.8 s + 2 s)")
		}
		if n := len(z.probes); n != 4 {
			t.Fatalf("%d probes, want still 4: one in flight at a time", n)
		}
	})
}

// Failed probes do not count as answers either.
func TestSessionFencePausesWhenProbesFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		z := newFakeZK(4 * time.Second)
		z.fail = true
		f, stop := startFence(z, 0.5)
		defer stop()
		// Only the connection vouches (at 0): the pause is due at 2 s.
		at(start, 2*time.Second-time.Nanosecond)
		if f.paused() {
			t.Fatal("paused before the connection time + budget")
		}
		at(start, 2*time.Second)
		if !f.paused() {
			t.Fatal("not paused 2 s after the connection although every probe failed")
		}
	})
}

// Answered probes open the gate again, but after a gap in the answers only
// once the leader must have heard of a probe sent after the gap: a probe
// answered at least a lag (T/4) before the next one was sent.
func TestSessionFenceResumesOnAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		z := newFakeZK(4 * time.Second) // budget 2 s, interval 400 ms, lag 1 s
		var counts fenceCounts
		f, stop := startFenceCounting(z, 0.5, &counts)
		defer stop()

		at(start, time.Second)
		release := z.hangProbes() // the probe of 1.2 s hangs
		at(start, 2800*time.Millisecond)
		if !f.paused() {
			t.Fatal("not paused at 2.8 s")
		}
		if p, r := counts.pauses.Load(), counts.resumes.Load(); p != 1 || r != 0 {
			t.Errorf("paused: OnPause called %d times, OnResume %d; want 1, 0", p, r)
		}

		// The probe sent at 1.2 s is answered at 5 s: lastOK moves to 1.2 s,
		// still more than a budget ago.
		at(start, 5*time.Second)
		release()
		synctest.Wait()
		if !f.paused() {
			t.Fatal("resumed on an answer to a probe sent more than a budget ago")
		}
		// Probes at 5.2, 5.6 and 6.0 s answer at once, but the leader is
		// only known to have seen the one of 0.8 s (then 1.2 s): lastOK may
		// move to 2.2 s (2.6 s) only. The probe of 6.4 s follows one
		// answered at 5.2 s, more than a lag earlier: the gate opens.
		at(start, 6400*time.Millisecond-time.Nanosecond)
		if !f.paused() {
			t.Fatal("resumed before answers had flowed for a lag")
		}
		at(start, 6400*time.Millisecond)
		if f.paused() {
			t.Fatal("still paused after answers flowed for a lag")
		}
		// Answers keep coming: the gate stays open.
		at(start, 20*time.Second)
		if f.paused() {
			t.Fatal("paused while every probe answers")
		}
		if p, r := counts.pauses.Load(), counts.resumes.Load(); p != 1 || r != 1 {
			t.Errorf("resumed: OnPause called %d times, OnResume %d; want 1, 1", p, r)
		}
		select {
		case <-f.expired:
			t.Fatal("expired signalled without a session change")
		default:
		}
	})
}

// A reconnection of the same session opens the gate at once (the leader
// revalidated the session); it signals no expiry.
func TestSessionFenceReconnectResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		z := newFakeZK(4 * time.Second)
		release := z.hangProbes()
		f, stop := startFence(z, 0.5)
		defer stop()
		at(start, 2*time.Second)
		if !f.paused() {
			t.Fatal("not paused at 2 s")
		}
		z.setSession(kazoo.SessionDisconnected, 1, 4*time.Second)
		at(start, 3*time.Second)
		release() // the hung probe, sent at 0, is answered: that moves nothing
		z.setSession(kazoo.SessionConnected, 1, 4*time.Second)
		synctest.Wait()
		if f.paused() {
			t.Fatal("still paused after the session reconnected")
		}
		select {
		case <-f.expired:
			t.Fatal("expired signalled for a reconnection of the same session")
		default:
		}
	})
}

// The budget is measured against the timeout the server granted, not the
// configured one, and read again at each (re)connection.
func TestSessionFenceUsesGrantedTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The group asked for 6 s (Zookeeper.Timeout): the budget would be 3 s.
		start := time.Now()
		z := newFakeZK(4 * time.Second) // granted: budget 2 s
		release := z.hangProbes()
		f, stop := startFence(z, 0.5)
		defer stop()

		at(start, 2*time.Second-time.Nanosecond)
		if f.paused() {
			t.Fatal("paused before 2 s")
		}
		at(start, 2*time.Second)
		if !f.paused() {
			t.Fatal("not paused at half the granted 4 s (the configured 6 s would give 3 s)")
		}

		// A new session on another server, which grants 8 s: budget 4 s
		// from the connection at 5 s.
		release()
		at(start, 5*time.Second)
		z.hangProbes()
		z.setSession(kazoo.SessionConnected, 2, 8*time.Second)
		synctest.Wait()
		if f.paused() {
			t.Fatal("still paused after a new session")
		}
		select {
		case <-f.expired:
		default:
			t.Fatal("no expired signal for a new session")
		}
		at(start, 9*time.Second-time.Nanosecond)
		if f.paused() {
			t.Fatal("paused before half the newly granted 8 s")
		}
		at(start, 9*time.Second)
		if !f.paused() {
			t.Fatal("not paused at half the newly granted 8 s")
		}
	})
}

// leaderView proves a probe seen only through a probe sent at least a lag
// after the first was answered.
func TestLeaderViewAnswer(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	s := func(d float64) time.Time { return t0.Add(time.Duration(d * float64(time.Second))) }
	l := fenceLimits{budget: 2 * time.Second, interval: 400 * time.Millisecond, lag: time.Second}

	var v leaderView
	if got := v.answer(probeResult{sent: s(0), answered: s(0)}, l); !got.IsZero() {
		t.Fatalf("with nothing proven lastOK may move to %v, want nowhere", got)
	}
	if got := v.answer(probeResult{sent: s(1), answered: s(1)}, l); !got.Equal(s(1)) {
		t.Fatalf("a probe sent a lag after one answered at 0: lastOK %v, want 1 s", got)
	}

	v = leaderView{}
	v.saw(s(0))
	for _, tc := range []struct{ sent, answered, want float64 }{
		{0.4, 0.4, 0.4},  // steady: lastOK = its send time
		{0.8, 0.8, 0.8},  //
		{1.2, 5.0, 1.2},  // answered late
		{5.2, 5.2, 2.2},  // proven: the 0.8 s probe; 0.8 + lag + interval
		{6.0, 6.0, 2.6},  // proven: the 1.2 s probe (answered 5.0 <= 6.0 - lag)
		{6.4, 6.4, 6.4},  // proven: the 5.2 s probe
		{10, 10.05, 7.8}, // after a gap: proven 6.4 s
	} {
		if got := v.answer(probeResult{sent: s(tc.sent), answered: s(tc.answered)}, l); !got.Equal(s(tc.want)) {
			t.Fatalf("probe sent at %vs: lastOK may move to %v, want %vs", tc.sent, got.Sub(t0), tc.want)
		}
	}
	if n := len(v.pending); n != 1 {
		t.Fatalf("%d probes pending proof, want 1 (the proven ones are dropped)", n)
	}
}

// Run returns only once the probe it sent has returned, so no goroutine of
// the fence outlives it: the group's Close waits for Run after closing the
// session, which answers a probe still in flight.
func TestSessionFenceRunReturnsAfterItsProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		z := newFakeZK(10 * time.Second)
		release := z.hangProbes()
		defer release() // a failure below must not leave the probe hanging
		stop := make(chan struct{})
		f := New(0.5, Deps{Session: z, Gate: NewGate(), Stop: stop, Log: slog.New(slog.DiscardHandler)})
		done := make(chan struct{})
		go func() { f.Run(); close(done) }()
		synctest.Wait() // the first probe hangs
		close(stop)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned while its probe was still in flight")
		default:
		}
		release()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Run did not return once its probe had")
		}
	})
}
