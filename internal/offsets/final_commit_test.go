package offsets

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"
)

// scriptedStore is a Store whose commits return errs in turn (nil beyond);
// any other call panics (the nil Store).
type scriptedStore struct {
	Store // nil: any call but Commit panics
	errs  []error
	calls int
	at    []time.Time // when each commit was made
}

func (s *scriptedStore) Commit(*Partition, int64, bool) error {
	s.at = append(s.at, time.Now())
	defer func() { s.calls++ }()
	if s.calls < len(s.errs) {
		return s.errs[s.calls]
	}
	return nil
}

// FinalCommit retries transient errors finalCommitRetries times on a
// doubling backoff, returns a permanent error after one attempt, and
// returns the error of the last attempt as it is.
func TestFinalCommitRetries(t *testing.T) {
	transient := func(i int) error { return fmt.Errorf("commit %d: %w", i, zk.ErrConnectionClosed) }
	permanent := errors.New("the offset node is corrupt")
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		errs  []error
		calls int
		waits []time.Duration
		want  error // nil: success
	}{
		{name: "succeeds at once", calls: 1},
		{name: "succeeds on the third attempt", errs: []error{transient(1), transient(2)}, calls: 3,
			waits: []time.Duration{100 * ms, 200 * ms}},
		{name: "a permanent error is not retried", errs: []error{permanent}, calls: 1, want: permanent},
		{name: "a permanent error after a transient one", errs: []error{transient(1), permanent}, calls: 2,
			waits: []time.Duration{100 * ms}, want: permanent},
	} {
		t.Run(c.name, synctestFunc(func(t *testing.T) {
			checkFinalCommit(t, c.errs, c.calls, c.waits, c.want)
		}))
	}
	t.Run("gives up after the last retry", synctestFunc(func(t *testing.T) {
		errs := make([]error, finalCommitRetries+2)
		for i := range errs {
			errs[i] = transient(i + 1)
		}
		checkFinalCommit(t, errs, finalCommitRetries+1,
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 400 * ms}, errs[finalCommitRetries])
	}))
}

// synctestFunc runs f in a synctest bubble, whose clock moves only when
// every goroutine in it waits: the retries' waits take no time.
func synctestFunc(f func(*testing.T)) func(*testing.T) {
	return func(t *testing.T) { synctest.Test(t, f) }
}

func checkFinalCommit(t *testing.T, errs []error, calls int, waits []time.Duration, want error) {
	t.Helper()
	c := newCommitter(KindZookeeper, nil)
	store := &scriptedStore{errs: errs}
	c.store = store
	tp := TopicPartition{"t", 0}
	o := c.adopt(tp, nil, 5, -1, nil)
	if !o.Mark(nil, 41) {
		t.Fatal("mark refused")
	}
	err := c.FinalCommit(o)
	if err != want { // the very error of the last attempt, not a wrapper
		t.Errorf("FinalCommit = %v, want %v", err, want)
	}
	if store.calls != calls {
		t.Errorf("%d attempts, want %d", store.calls, calls)
	}
	var got []time.Duration
	for i := 1; i < len(store.at); i++ {
		got = append(got, store.at[i].Sub(store.at[i-1]))
	}
	if !slices.Equal(got, waits) {
		t.Errorf("waits %v, want %v", got, waits)
	}
	if c.Lookup(tp) != nil {
		t.Error("the partition is still tracked after its final commit")
	}
}
