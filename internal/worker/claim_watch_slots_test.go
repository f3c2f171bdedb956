package worker

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/zkgroup/kafka/kazoo"
)

// gatedRegistry holds every WatchClaimNodes call until the test lets one
// through, counting the calls in flight.
type gatedRegistry struct {
	mu                  sync.Mutex
	inFlight, most, all int
	pass                chan struct{}
}

func (r *gatedRegistry) WatchClaimNodes(*kazoo.PartitionClaim) (kazoo.ClaimWatches, error) {
	r.mu.Lock()
	r.inFlight++
	r.all++
	r.most = max(r.most, r.inFlight)
	r.mu.Unlock()
	<-r.pass
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	return kazoo.ClaimWatches{Epoch: make(chan kazoo.Event), Owner: make(chan kazoo.Event)}, nil
}

func (r *gatedRegistry) ReleaseAfterLoss(*kazoo.PartitionClaim) error { return nil }

func (r *gatedRegistry) counts() (inFlight, most, all int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight, r.most, r.all
}

// A rebalance that gains hundreds of partitions arms hundreds of claim
// watches. ZooKeeper answers a session's requests in order, so they must
// not all be sent at once: the claims and offset reads sent after them
// would wait behind every one. The workers share WatchSlots, and no more
// watches are armed at once than it holds.
func TestClaimWatchesArmAtMostWatchSlotsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers, slots = 20, 3
		reg := &gatedRegistry{pass: make(chan struct{})}
		deps := Deps{Registry: reg, WatchSlots: make(chan struct{}, slots)}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range workers {
			w := newTestWorker(deps)
			wg.Go(func() { w.watchClaim(testClaim(1), nil, stop) })
		}
		defer wg.Wait()
		defer close(stop)
		synctest.Wait()
		if inFlight, _, _ := reg.counts(); inFlight != slots {
			close(reg.pass) // let every arming end
			t.Fatalf("%d watches arming at once, want %d (the slots)", inFlight, slots)
		}
		for i := range workers {
			reg.pass <- struct{}{}
			synctest.Wait()
			inFlight, most, all := reg.counts()
			if want := min(slots, workers-i-1); inFlight != want || most > slots {
				close(reg.pass)
				t.Fatalf("after %d armed: %d arming, at most %d at once; want %d and at most %d", i+1, inFlight, most, want, slots)
			}
			if want := min(workers, slots+i+1); all != want {
				close(reg.pass)
				t.Fatalf("after %d armed: %d arming began, want %d", i+1, all, want)
			}
		}
	})
}

// A worker that stops while it waits for a slot stops waiting: its claim
// is being released, and there is nothing to watch any more.
func TestClaimWatchWaitingForASlotEndsWithTheWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := &gatedRegistry{pass: make(chan struct{})}
		deps := Deps{Registry: reg, WatchSlots: make(chan struct{}, 1)}
		deps.WatchSlots <- struct{}{} // every slot taken
		stop := make(chan struct{})
		done := make(chan struct{})
		w := newTestWorker(deps)
		go func() { defer close(done); w.watchClaim(testClaim(1), nil, stop) }()
		synctest.Wait()
		close(stop)
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("watchClaim still waits for a slot after its worker stopped")
		}
		if _, _, all := reg.counts(); all != 0 {
			t.Fatalf("%d watches armed without a slot", all)
		}
	})
}
