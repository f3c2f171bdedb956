package claim

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// watchRecorder keeps every owner watch its Registry hands the loop: those
// of WatchOwner and those a batch's read armed (watchedOwner).
type watchRecorder struct {
	Registry
	mu      sync.Mutex
	watches map[<-chan kazoo.Event]int32 // watch -> partition
}

func (w *watchRecorder) note(p int32, ch <-chan kazoo.Event) {
	if ch == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watches[ch] = p
}

func (w *watchRecorder) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	pc, err := w.Registry.TryClaim(ctx, topic, partition)
	var wo *watchedOwner
	if errors.As(err, &wo) {
		w.note(partition, wo.watch)
	}
	return pc, err
}

func (w *watchRecorder) TryClaimWatching(ctx context.Context, topic string, partition int32, watch bool) (*kazoo.PartitionClaim, error) {
	pc, err := w.Registry.(watchingRegistry).TryClaimWatching(ctx, topic, partition, watch)
	var wo *watchedOwner
	if errors.As(err, &wo) {
		w.note(partition, wo.watch)
	}
	return pc, err
}

func (w *watchRecorder) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	owner, ch, err := w.Registry.WatchOwner(ctx, topic, partition)
	w.note(partition, ch)
	return owner, ch, err
}

// armedPerPartition counts, per partition, the watches handed out that
// have not fired (the ZooKeeper client still holds their registration).
func (w *watchRecorder) armedPerPartition() map[int32]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := map[int32]int{}
	for ch, p := range w.watches {
		select {
		case <-ch:
		default:
			n[p]++
		}
	}
	return n
}

// ownerWatches promises one armed watch per partition however long the
// partition is held elsewhere. Many partitions held by A, claimed by B's
// Keep loops at once, are tried in batches (ClaimBatch): a batch's read
// arms a watch (GetW) only for a loop that waits on none. When every
// batch's read armed one, the loop stored it over the one it armed before,
// never fired nor reused, and registrations piled up in the client for as
// long as A held the partitions.
func TestIntegrationBatchedAttemptsArmOneWatchPerPartition(t *testing.T) {
	conf := quickRoundsConfig()
	_, a, _, cgA := itGroup(t, conf)
	cgB := itConnect(t).Consumergroup(cgA.Name)
	regB := &watchRecorder{Registry: NewKazooRegistry(cgB, "B"), watches: map[<-chan kazoo.Event]int32{}}
	b := newClaimer(t, regB, conf)
	const topic, partitions, rounds = "claim.batchleak", 16, 20

	for p := range int32(partitions) {
		if _, err := a.Claim(t.Context(), topic, p); err != nil {
			t.Fatalf("A claims %d: %v", p, err)
		}
	}
	var wg sync.WaitGroup
	for p := range int32(partitions) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			n := 0
			_, _ = b.Keep(ctx, topic, p, func(*Error) {
				if n++; n == rounds {
					cancel()
				}
			})
		}()
	}
	wg.Wait()
	armed := regB.armedPerPartition()
	worst := 0
	for _, n := range armed {
		worst = max(worst, n)
	}
	t.Logf("armed watches per partition after %d Keep rounds: %v", rounds, armed)
	if worst > 1 {
		t.Errorf("up to %d watches armed on one owner node, want at most 1 (ownerWatches' promise)", worst)
	}
}
