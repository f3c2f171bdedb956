package worker

import (
	"fmt"
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

// firingRegistry arms watches on claim watched that the test fires, and
// finds that claim lost once a watch fired; every other claim's arming
// waits, holding its slot, until pass is closed.
type firingRegistry struct {
	watched *kazoo.PartitionClaim
	owner   chan kazoo.Event
	fired   chan struct{} // closed when the test fired the owner watch
	pass    chan struct{}
}

func (r *firingRegistry) WatchClaimNodes(pc *kazoo.PartitionClaim) (kazoo.ClaimWatches, error) {
	if pc != r.watched {
		<-r.pass
		return kazoo.ClaimWatches{Epoch: make(chan kazoo.Event), Owner: make(chan kazoo.Event)}, nil
	}
	select {
	case <-r.fired:
		return kazoo.ClaimWatches{}, fmt.Errorf("%w: owner node deleted", kazoo.ErrClaimLost)
	default:
		return kazoo.ClaimWatches{Epoch: make(chan kazoo.Event), Owner: r.owner}, nil
	}
}

func (r *firingRegistry) ReleaseAfterLoss(*kazoo.PartitionClaim) error { return nil }

// A watch that fired on its node says the claim ended (only a claim or a
// reset moves an epoch node, and only a release or the session's end
// deletes an owner node): its check goes ahead of the armings waiting for
// a slot, so a rebalance arming hundreds of watches does not keep a lost
// partition delivering until they are done. EventNotWatching, which the
// session's end sends every watch at once, waits for a slot.
func TestFiredClaimWatchDoesNotWaitForASlot(t *testing.T) {
	for _, tc := range []struct {
		event    kazoo.EventType
		waitsFor bool // a slot
	}{
		{event: kazoo.EventNodeDeleted},
		{event: kazoo.EventNodeDataChanged},
		{event: kazoo.EventNotWatching, waitsFor: true},
	} {
		t.Run(tc.event.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkFiredWatchSlot(t, tc.event, tc.waitsFor) })
		})
	}
}

func checkFiredWatchSlot(t *testing.T, event kazoo.EventType, waitsForSlot bool) {
	const slots = 2
	watched := testClaim(1)
	reg := &firingRegistry{watched: watched, owner: make(chan kazoo.Event, 1),
		fired: make(chan struct{}), pass: make(chan struct{})}
	var reported []error
	deps := Deps{Registry: reg, Session: &fixedSession{s: kazoo.Session{ID: 1}},
		WatchSlots:      make(chan struct{}, slots),
		ReportPartition: func(_ string, _ int32, err error) { reported = append(reported, err) }}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	passed := false
	defer func() {
		if !passed {
			close(reg.pass)
		}
	}()

	w := newTestWorker(deps)
	owned := adoptAt(w, watched, 0)
	wg.Go(func() { w.watchClaim(watched, owned, stop) })
	synctest.Wait()            // armed
	for i := range 2 * slots { // a rebalance's armings take every slot, and more wait
		other := &kazoo.PartitionClaim{Topic: "t", Partition: int32(i + 1), InstanceID: "i", SessionID: 1}
		wg.Go(func() { newTestWorker(deps).watchClaim(other, nil, stop) })
	}
	synctest.Wait()

	close(reg.fired)
	reg.owner <- kazoo.Event{Type: event}
	synctest.Wait()
	if waitsForSlot {
		if owned.Lost() {
			t.Fatal("checked again without a slot after EventNotWatching")
		}
		close(reg.pass) // the armings end: the slots go round
		passed = true
		synctest.Wait()
	}
	if !owned.Lost() || len(reported) != 1 {
		t.Fatalf("after its watch fired, with every slot taken: lost %v, %d reported; want true, 1",
			owned.Lost(), len(reported))
	}
}
