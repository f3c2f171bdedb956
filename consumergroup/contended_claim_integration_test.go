package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// contendedAfterLostReply: attempt 1 applies in ZooKeeper and its reply is
// "lost" (as TestIntegrationStoppedClaimInDoubtLeavesNoOwnerNode does);
// attempt 2 is a REAL kazoo Claim made while the epoch node is being bumped
// (an operator's resets), repeated until kazoo itself answers
// ErrClaimContended: kazoo found the node ours and could not bump the
// epoch, so the node is still there. Later attempts wait for the stop.
type contendedAfterLostReply struct {
	claim.Registry
	f       *orphanFixture
	mu      sync.Mutex
	n       map[int32]int
	ready   sync.WaitGroup
	genuine atomic.Int32 // attempts 2 that got ErrClaimContended from kazoo
}

func (r *contendedAfterLostReply) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	r.mu.Lock()
	r.n[partition]++
	n := r.n[partition]
	r.mu.Unlock()
	switch n {
	case 1:
		if _, err := r.Registry.TryClaim(ctx, topic, partition); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("claim %s/%d: %w", topic, partition, zk.ErrConnectionClosed) // applied; reply lost
	case 2:
		defer r.ready.Done()
		stop := r.f.bumpEpoch(partition)
		defer stop()
		var err error
		for range 500 {
			_, err = r.Registry.TryClaim(ctx, topic, partition)
			if errors.Is(err, kazoo.ErrClaimContended) {
				r.genuine.Add(1)
				return nil, err
			}
		}
		r.f.t.Errorf("kazoo never answered ErrClaimContended (last: %v)", err)
		return nil, err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// bumpEpoch bumps the partition's epoch node as fast as it can (as resets
// do, one after the other) until stop is called.
func (f *orphanFixture) bumpEpoch(p int32) (stop func()) {
	conn, _, err := zk.Connect(testenv.ZKServers(), 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		f.t.Fatal(err)
	}
	path := fmt.Sprintf("/consumers/%s/epochs/%s/%d", f.group, f.topic, p)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_, _ = conn.Set(path, nil, -1)
			}
		}()
	}
	return func() { close(done); wg.Wait(); conn.Close() }
}

// A claim attempt whose reply was lost, then one that kazoo answers with
// ErrClaimContended (our node found, its epoch bump refused), then a stop:
// the node is still ours, so the stop is still in doubt and the worker
// deletes it. When ErrClaimContended cleared the doubt, the node x created
// stayed under x's live session, and the partition that moved to y was
// never claimed.
func TestIntegrationContendedAfterLostReplyLeavesNoOwnerNode(t *testing.T) {
	f := newOrphanFixture(t, 2)
	cfg := fenceTestConfig()
	reg := &contendedAfterLostReply{f: f, n: map[int32]int{}}
	reg.ready.Add(2)
	var x *ConsumerGroup
	var xmu sync.Mutex
	wrap := func(cg *ConsumerGroup, r claim.Registry) claim.Registry {
		xmu.Lock()
		defer xmu.Unlock()
		if x != nil {
			return r
		}
		x = cg
		reg.Registry = r
		return reg
	}
	testHooks.wrapRegistry.Store(&wrap)
	t.Cleanup(func() { testHooks.wrapRegistry.Store(nil) })

	xg := f.join(cfg)
	f.waitOwned(15*time.Second, 2, "x joined", xg)
	reg.ready.Wait() // both partitions: attempt 2 answered ErrClaimContended
	t.Logf("kazoo answered ErrClaimContended with our node in place for %d partitions", reg.genuine.Load())
	for p := range int32(2) {
		if o := f.owner(p); o != xg.instance.ID {
			t.Fatalf("after ErrClaimContended partition %d's owner node holds %q, want x's %q (kazoo leaves the node)", p, o, xg.instance.ID)
		}
	}
	y := f.join(cfg)
	f.waitOwned(cfg.Zookeeper.Timeout+2*time.Second, 2, "y joined while x's claims were in doubt then contended", xg, y)
}
