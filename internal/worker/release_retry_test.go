package worker

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/kazoo"
)

// scriptedRegistry answers ReleaseAfterLoss with errs in turn (nil
// beyond) and records when each call was made; onCall runs before each
// answer.
type scriptedRegistry struct {
	mu     sync.Mutex
	errs   []error
	at     []time.Time
	onCall func(n int)
}

func (r *scriptedRegistry) WatchClaimNodes(*kazoo.PartitionClaim) (kazoo.ClaimWatches, error) {
	return kazoo.ClaimWatches{}, errors.New("not in this test")
}

func (r *scriptedRegistry) ReleaseAfterLoss(*kazoo.PartitionClaim) error {
	r.mu.Lock()
	n := len(r.at)
	r.at = append(r.at, time.Now())
	onCall := r.onCall
	r.mu.Unlock()
	if onCall != nil {
		onCall(n + 1)
	}
	if n < len(r.errs) {
		return r.errs[n]
	}
	return nil
}

func (r *scriptedRegistry) waits() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(r.at); i++ {
		out = append(out, r.at[i].Sub(r.at[i-1]))
	}
	return out
}

// fixedSession is a Session whose state the test sets.
type fixedSession struct {
	mu      sync.Mutex
	s       kazoo.Session
	timeout time.Duration
}

func (f *fixedSession) Session() (kazoo.Session, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, nil
}
func (f *fixedSession) SessionID() int64 { s, _ := f.Session(); return s.ID }
func (f *fixedSession) SessionTimeout() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.timeout
}
func (f *fixedSession) set(status kazoo.SessionStatus) {
	f.mu.Lock()
	f.s.Status = status
	f.mu.Unlock()
}

func inDoubt(i int) error { return fmt.Errorf("delete %d: %w", i, zk.ErrConnectionClosed) }

// releaseIfOurs tries again while ZooKeeper's answer is in doubt, on waits
// doubling from InitialInterval up to MaxInterval and a quarter of the
// session timeout; it returns an error retrying does not mend at once, and
// stops (nil) once the session has ended or Close stops waiting.
func TestReleaseIfOursRetries(t *testing.T) {
	ms := time.Millisecond
	refused := errors.New("not authorized")
	for _, c := range []struct {
		name    string
		errs    []error
		timeout time.Duration // the session's
		onCall  func(n int, s *fixedSession, closing chan struct{})
		waits   []time.Duration
		want    error
	}{
		{name: "deleted at once", timeout: 6 * time.Second},
		{name: "in doubt, then deleted", errs: []error{inDoubt(1), inDoubt(2), inDoubt(3), inDoubt(4), inDoubt(5)},
			timeout: 6 * time.Second, waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second}},
		{name: "waits capped at a quarter of the session timeout", errs: []error{inDoubt(1), inDoubt(2), inDoubt(3), inDoubt(4)},
			timeout: 2 * time.Second, waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 500 * ms}},
		{name: "an error retrying does not mend", errs: []error{inDoubt(1), refused},
			timeout: 6 * time.Second, waits: []time.Duration{100 * ms}, want: refused},
		{name: "the session ended", errs: []error{inDoubt(1), inDoubt(2), inDoubt(3)}, timeout: 6 * time.Second,
			onCall: func(n int, s *fixedSession, _ chan struct{}) {
				if n == 2 {
					s.set(kazoo.SessionExpired)
				}
			},
			waits: []time.Duration{100 * ms}},
		{name: "Close stops waiting", errs: []error{inDoubt(1), inDoubt(2), inDoubt(3)}, timeout: 6 * time.Second,
			onCall: func(n int, _ *fixedSession, closing chan struct{}) {
				if n == 2 {
					close(closing)
				}
			},
			waits: []time.Duration{100 * ms}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				session := &fixedSession{s: kazoo.Session{ID: 7, Status: kazoo.SessionConnected}, timeout: c.timeout}
				closing := make(chan struct{})
				reg := &scriptedRegistry{errs: c.errs}
				if c.onCall != nil {
					reg.onCall = func(n int) { c.onCall(n, session, closing) }
				}
				w := newTestWorker(Deps{Registry: reg, Session: session, Closing: closing})
				w.cfg.InitialInterval, w.cfg.MaxInterval = 100*ms, time.Second
				if err := w.releaseIfOurs(testClaim(7)); err != c.want {
					t.Errorf("releaseIfOurs = %v, want %v", err, c.want)
				}
				if got := reg.waits(); !slices.Equal(got, c.waits) {
					t.Errorf("waits %v, want %v", got, c.waits)
				}
			})
		})
	}
}
