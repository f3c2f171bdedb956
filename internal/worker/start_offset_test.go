package worker

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
)

// storingOffsets is the test committer whose commits return errs in turn
// and then succeed: the pending position becomes the committed one. It
// records when each commit was made; onCommit runs before each answer.
type storingOffsets struct {
	Offsets
	mu       sync.Mutex
	errs     []error
	at       []time.Time
	onCommit func(n int, o *offsets.Partition)
}

func (s *storingOffsets) Commit(o *offsets.Partition) error {
	s.mu.Lock()
	n := len(s.at)
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	if s.onCommit != nil {
		s.onCommit(n+1, o)
	}
	if n < len(s.errs) {
		return s.errs[n]
	}
	if next, dirty, ok := o.PendingOutsideRecall(); ok && dirty {
		o.Tracker.Committed(next)
	}
	return nil
}

func (s *storingOffsets) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return between(s.at)
}

// between returns the time between consecutive instants.
func between(at []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]))
	}
	return out
}

// scriptedInitial resolves Offsets.Initial to 42 after errs in turn,
// recording when it was asked; onCall runs before each answer.
type scriptedInitial struct {
	errs   []error
	at     []time.Time
	onCall func(n int)
}

func (s *scriptedInitial) resolve(string, int32) (int64, error) {
	n := len(s.at)
	s.at = append(s.at, time.Now())
	if s.onCall != nil {
		s.onCall(n + 1)
	}
	if n < len(s.errs) {
		return -1, s.errs[n]
	}
	return 42, nil
}

func (s *scriptedInitial) waits() []time.Duration { return between(s.at) }

// startAtInitial retries resolving Offsets.Initial on waits doubling from
// InitialInterval up to RetryCooldown, reports the failures only once they
// have lasted startReportAfter, and gives up when the worker's context
// ends.
func TestStartAtInitialRetries(t *testing.T) {
	ms := time.Millisecond
	noLeader := func(i int) error { return fmt.Errorf("resolve %d: no leader", i) }
	for _, c := range []struct {
		name     string
		fails    int
		stopAt   int // cancel the worker's context at this call; 0: never
		waits    []time.Duration
		reported int
		ok       bool
	}{
		{name: "at once", ok: true},
		{name: "after failures", fails: 6, ok: true, reported: 1,
			// failures at 0, 0.1, 0.3, 0.7, 1.5 s (not reported) and 2.5 s (reported); resolved at 3.5 s
			waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{name: "stopped while waiting", fails: 10, stopAt: 3, waits: []time.Duration{100 * ms, 200 * ms}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				initial := &scriptedInitial{}
				for i := range c.fails {
					initial.errs = append(initial.errs, noLeader(i+1))
				}
				var reported []error
				store := &storingOffsets{Offsets: offsets.New(offsets.Config{}, offsets.Deps{})}
				w := newTestWorker(Deps{InitialOffset: initial.resolve, Offsets: store,
					ReportPartition: func(_ string, _ int32, err error) { reported = append(reported, err) }})
				w.cfg.InitialInterval, w.cfg.RetryCooldown = 100*ms, time.Second
				if c.stopAt > 0 {
					initial.onCall = func(n int) {
						if n == c.stopAt {
							w.cancel()
						}
					}
				}
				owned := adoptAt(w, testClaim(7), -1)
				start, ok := w.startAtInitial(owned)
				if ok != c.ok || ok && start != 42 {
					t.Errorf("startAtInitial = %d, %v; want 42 %v", start, ok, c.ok)
				}
				if got := initial.waits(); !slices.Equal(got, c.waits) {
					t.Errorf("waits %v, want %v", got, c.waits)
				}
				if len(reported) != c.reported {
					t.Errorf("%d failures reported, want %d: %v", len(reported), c.reported, reported)
				}
				if ok && owned.Tracker.CommittedOffset() != 42 {
					t.Errorf("committed %d, want the start 42 stored before any delivery", owned.Tracker.CommittedOffset())
				}
			})
		})
	}
}

// commitStart commits the start again, on waits doubling from
// InitialInterval up to RetryCooldown, reporting each failure, until it is
// stored; a conflict or a loss ends it at once (the seek or the loss is
// taken next), and so does the end of the worker's context.
func TestCommitStartRetries(t *testing.T) {
	ms := time.Millisecond
	failed := func(i int) error { return fmt.Errorf("commit %d: connection closed", i) }
	conflict := &offsets.ConflictError{Topic: "t", Partition: 0, Pending: 42, Stored: 50}
	for _, c := range []struct {
		name     string
		errs     []error
		onCommit func(n int, o *offsets.Partition, w *Worker)
		waits    []time.Duration
		reported int
		ok       bool
	}{
		{name: "stored at once", ok: true},
		{name: "stored after failures", errs: []error{failed(1), failed(2), failed(3), failed(4), failed(5)}, ok: true,
			waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second}, reported: 5},
		{name: "a conflict", errs: []error{failed(1), conflict}, ok: true,
			waits: []time.Duration{100 * ms}, reported: 1},
		{name: "the claim is lost", errs: []error{failed(1), failed(2)},
			onCommit: func(n int, o *offsets.Partition, _ *Worker) {
				if n == 2 {
					o.SetLost()
				}
			},
			waits: []time.Duration{100 * ms}, reported: 1},
		{name: "the worker stops", errs: []error{failed(1), failed(2), failed(3)},
			onCommit: func(n int, _ *offsets.Partition, w *Worker) {
				if n == 2 {
					w.cancel()
				}
			},
			waits: []time.Duration{100 * ms}, reported: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reported []error
				store := &storingOffsets{Offsets: offsets.New(offsets.Config{}, offsets.Deps{}), errs: c.errs}
				w := newTestWorker(Deps{Offsets: store, Report: func(err error) { reported = append(reported, err) }})
				w.cfg.InitialInterval, w.cfg.RetryCooldown = 100*ms, time.Second
				if c.onCommit != nil {
					store.onCommit = func(n int, o *offsets.Partition) { c.onCommit(n, o, w) }
				}
				owned := adoptAt(w, testClaim(7), -1)
				owned.RestartUncommitted(42)
				if ok := w.commitStart(owned); ok != c.ok {
					t.Errorf("commitStart = %v, want %v", ok, c.ok)
				}
				if got := store.waits(); !slices.Equal(got, c.waits) {
					t.Errorf("waits %v, want %v", got, c.waits)
				}
				if len(reported) != c.reported {
					t.Errorf("%d failures reported, want %d: %v", len(reported), c.reported, reported)
				}
			})
		})
	}
}
