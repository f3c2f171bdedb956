package claim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// itConnect opens a Kazoo (its own ZooKeeper session), closed when the test
// ends.
func itConnect(t *testing.T) *kazoo.Kazoo {
	t.Helper()
	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatalf("connect to %s (is integration/stack.sh up?): %v", testenv.ZKAddr(), err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

// itGroup returns a fresh group name and two instances of it, A and B, each
// on its own connection, and deletes the group when the test ends.
func itGroup(t *testing.T, conf *Config) (group string, a, b *Claimer, cgA *kazoo.Consumergroup) {
	t.Helper()
	testenv.Integration(t)
	group = testenv.UniqueName("claim-it")
	cgA = itConnect(t).Consumergroup(group)
	cgB := itConnect(t).Consumergroup(group)
	t.Cleanup(func() {
		if err := cgA.Delete(); err != nil {
			t.Errorf("cleanup: delete group %s: %v", group, err)
		}
	})
	a = newClaimer(t, &watchSignal{Registry: NewKazooRegistry(cgA, "A"), watching: make(chan struct{}, 1)}, conf)
	b = newClaimer(t, &watchSignal{Registry: NewKazooRegistry(cgB, "B"), watching: make(chan struct{}, 1)}, conf)
	return group, a, b, cgA
}

// watchSignal tells the test when its loop has a watch on a live owner.
type watchSignal struct {
	Registry
	watching chan struct{}
}

func (w *watchSignal) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	owner, ch, err := w.Registry.WatchOwner(ctx, topic, partition)
	if err == nil && owner != "" {
		select {
		case w.watching <- struct{}{}:
		default:
		}
	}
	return owner, ch, err
}

// Two real instances hand one partition back and forth 100 times: the
// holder releases while the other waits in Claim. The handoff is the time
// from the holder's Release returning to the waiter's Claim returning.
func TestIntegrationHandoff(t *testing.T) {
	conf := NewConfig()
	_, a, b, _ := itGroup(t, conf)
	const topic, partition, handoffs = "claim.handoff", int32(0), 100
	ctx := t.Context()

	holder, waiter := a, b
	pc, err := holder.Claim(ctx, topic, partition)
	if err != nil {
		t.Fatalf("first claim: %v", err)
	}
	times := make([]time.Duration, 0, handoffs)
	for i := range handoffs {
		type result struct {
			pc  *kazoo.PartitionClaim
			at  time.Time
			err error
		}
		sig := waiter.reg.(*watchSignal)
		select { // drop a signal left from an earlier round
		case <-sig.watching:
		default:
		}
		done := make(chan result, 1)
		go func() {
			pc, err := waiter.Claim(ctx, topic, partition)
			done <- result{pc, time.Now(), err}
		}()
		// Hand off only once the waiter is watching the holder's node: the
		// race under test is the release, not the waiter's start.
		<-sig.watching
		if err := holder.Release(ctx, pc); err != nil {
			t.Fatalf("handoff %d: release: %v", i, err)
		}
		released := time.Now()
		r := <-done
		if r.err != nil {
			t.Fatalf("handoff %d: claim: %v", i, r.err)
		}
		if r.pc.Epoch <= pc.Epoch {
			t.Errorf("handoff %d: epoch %d after %d, want it to move", i, r.pc.Epoch, pc.Epoch)
		}
		times = append(times, max(0, r.at.Sub(released)))
		pc = r.pc
		holder, waiter = waiter, holder
	}
	if err := holder.Release(ctx, pc); err != nil {
		t.Fatalf("final release: %v", err)
	}
	slices.Sort(times)
	median, worst := times[len(times)/2], times[len(times)-1]
	t.Logf("handoff over %d: median %v, p90 %v, worst %v; A %+v; B %+v",
		handoffs, median, times[len(times)*9/10], worst, a.Stats(), b.Stats())
	if median > 100*time.Millisecond {
		t.Errorf("median handoff %v, want <= 100ms (the watch should wake the waiter)", median)
	}
	if worst > conf.MaxInterval+500*time.Millisecond {
		t.Errorf("worst handoff %v, want within MaxInterval (%v) and a margin", worst, conf.MaxInterval)
	}
	if w := a.Stats().WatchWakeups + b.Stats().WatchWakeups; w < handoffs*9/10 {
		t.Errorf("%d watch wake-ups for %d handoffs: the watch is not doing the work", w, handoffs)
	}
}

// The overlap race, 200 times on 200 partitions at once, on the real stack:
// A holds every partition and drains for the full ProcessingTimeout plus a
// random lag (up to half of ExtraTime) before releasing; B starts claiming
// all of them when A starts draining. Every partition must end up owned by
// B: none left unowned.
func TestIntegrationOverlapRace(t *testing.T) {
	conf := NewConfig()
	conf.ProcessingTimeout = 400 * time.Millisecond
	conf.ExtraTime = 400 * time.Millisecond
	conf.InitialInterval = 10 * time.Millisecond
	conf.MaxInterval = 100 * time.Millisecond
	_, a, b, cgA := itGroup(t, conf)
	const topic, partitions = "claim.overlap", 200
	ctx := t.Context()

	held := make([]*kazoo.PartitionClaim, partitions)
	for p := range int32(partitions) {
		pc, err := a.Claim(ctx, topic, p)
		if err != nil {
			t.Fatalf("A claims %d: %v", p, err)
		}
		held[p] = pc
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*partitions)
	claims := make([]*kazoo.PartitionClaim, partitions)
	for p := range int32(partitions) {
		lag := time.Duration(rand.Int64N(int64(conf.ExtraTime / 2)))
		wg.Add(2)
		go func() { // A drains, then releases
			defer wg.Done()
			time.Sleep(conf.ProcessingTimeout + lag)
			if err := a.Release(ctx, held[p]); err != nil {
				errs <- fmt.Errorf("A releases %d: %w", p, err)
			}
		}()
		go func() { // B claims meanwhile
			defer wg.Done()
			pc, err := b.Claim(ctx, topic, p)
			if err != nil {
				errs <- fmt.Errorf("B claims %d (A lagged %v): %w", p, lag, err)
				return
			}
			claims[p] = pc
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	unowned := 0
	for p := range int32(partitions) {
		owner, err := cgA.PartitionOwner(topic, p)
		switch {
		case err != nil:
			t.Errorf("partition %d: %v", p, err)
		case owner == nil:
			unowned++
		case owner.ID != "B":
			t.Errorf("partition %d owned by %q, want B", p, owner.ID)
		}
	}
	if unowned > 0 {
		t.Errorf("%d of %d partitions left unowned", unowned, partitions)
	}
	t.Logf("overlap race x%d: %d unowned; B %+v", partitions, unowned, b.Stats())

	for p, pc := range claims {
		if pc == nil {
			continue
		}
		if err := b.Release(context.Background(), pc); err != nil && !errors.Is(err, kazoo.ErrClaimLost) {
			t.Errorf("B releases %d: %v", p, err)
		}
	}
}
