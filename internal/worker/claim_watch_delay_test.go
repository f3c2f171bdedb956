package worker

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// armingRegistry records when the claim watch is armed (WatchClaimNodes);
// its watches never fire.
type armingRegistry struct {
	mu sync.Mutex
	at []time.Duration
	t0 time.Time
}

func (r *armingRegistry) WatchClaimNodes(*kazoo.PartitionClaim) (kazoo.ClaimWatches, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Since(r.t0))
	return kazoo.ClaimWatches{}, nil
}

func (r *armingRegistry) ReleaseAfterLoss(*kazoo.PartitionClaim) error { return nil }

func (r *armingRegistry) armed() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.at...)
}

// The claim watch's reads wait for the claim's first hand-out, or
// ClaimWatchDelay, whichever comes first, so that in a rebalance they do
// not queue ahead of the next claims and offset reads; without a delay
// (offsets in Kafka, whose commits the watch fences) it is armed at once;
// a worker stopped first never arms it.
func TestClaimWatchArmedAtFirstHandOutOrAfterTheDelay(t *testing.T) {
	cases := []struct {
		name    string
		delay   time.Duration
		handOut time.Duration // when the first message goes out (0: never)
		stopAt  time.Duration
		wantAt  []time.Duration
	}{
		{"first hand-out before the delay", 100 * time.Millisecond, 30 * time.Millisecond, time.Second, []time.Duration{30 * time.Millisecond}},
		{"nothing handed out", 100 * time.Millisecond, 0, time.Second, []time.Duration{100 * time.Millisecond}},
		{"no delay", 0, 30 * time.Millisecond, time.Second, []time.Duration{0}},
		{"stopped first", 100 * time.Millisecond, 0, 50 * time.Millisecond, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := &armingRegistry{t0: time.Now()}
				w := newTestWorker(Deps{Registry: reg})
				w.cfg.ClaimWatchDelay = c.delay
				first, stop := make(chan struct{}), make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					w.watchClaim(testClaim(1), adoptAt(w, testClaim(1), 0), first, stop)
				}()
				if c.handOut > 0 {
					time.Sleep(c.handOut)
					close(first)
				}
				time.Sleep(c.stopAt - c.handOut)
				close(stop)
				<-done
				got := reg.armed()
				if len(got) != len(c.wantAt) || len(got) > 0 && got[0] != c.wantAt[0] {
					t.Errorf("armed at %v, want %v", got, c.wantAt)
				}
			})
		})
	}
}
