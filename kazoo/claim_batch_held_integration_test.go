package kazoo

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A batch that meets partitions still held by another instance (a joiner
// claiming before the previous owner released) answers those from one
// pipelined read of their owner nodes, as Claim answers after its create
// met the node (ErrPartitionClaimedByOther), without a single Claim each:
// at 256 partitions those single Claims held the batch for 100 ms. The
// free partitions are claimed together as before.
func TestIntegrationBatchAnswersHeldPartitionsFromOneRead(t *testing.T) {
	t.Parallel()
	const partitions, held = 10, 8 // b holds 0..7, 8 and 9 are free
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	a := kzA.Consumergroup("g").Instance("a")
	b := kzB.Consumergroup("g").Instance("b")
	reqs := make([]ClaimRequest, partitions)
	var bClaims []*PartitionClaim
	for p := range reqs {
		reqs[p] = ClaimRequest{Topic: "t", Partition: int32(p), Watch: true}
		cgNoErr(t, a.Release(cgMust(a.Claim("t", int32(p))).get(t))) // the parents and epoch nodes
		if p < held {
			bClaims = append(bClaims, cgMust(b.Claim("t", int32(p))).get(t))
		}
	}
	var exists atomic.Int32
	a.cg.testHook = func(s hookStep) error {
		if s == stepClaimExists {
			exists.Add(1)
		}
		return nil
	}
	results := a.ClaimBatch(reqs)
	a.cg.testHook = nil
	for p, r := range results {
		if p < held {
			if !errors.Is(r.Err, ErrPartitionClaimedByOther) {
				t.Fatalf("partition %d held by b: %+v, want ErrPartitionClaimedByOther", p, r)
			}
			e.assertOwner("g", "t", int32(p), "b", kzB)
			if r.OwnerWatch == nil {
				t.Fatalf("partition %d held by b: no owner watch with the answer", p)
			}
			continue
		}
		if r.Err != nil || r.Claim.Epoch != e.epoch("g", "t", int32(p)) {
			t.Fatalf("partition %d: %+v", p, r)
		}
		e.assertOwner("g", "t", int32(p), "a", kzA)
		cgNoErr(t, a.Release(r.Claim))
	}
	if n := exists.Load(); n != 0 {
		t.Fatalf("%d single claims met an owner node, want 0: the held partitions were each claimed alone", n)
	}
	// Without Watch, a held partition's answer arms no watch: a caller
	// already waiting on one would hold a second registration.
	for i := range reqs {
		reqs[i].Watch = false
	}
	for p, r := range a.ClaimBatch(reqs[:held]) {
		if !errors.Is(r.Err, ErrPartitionClaimedByOther) || r.OwnerWatch != nil {
			t.Fatalf("partition %d held by b, asked without a watch: %+v, want ErrPartitionClaimedByOther and no watch", p, r)
		}
	}
	for _, c := range bClaims {
		cgNoErr(t, b.Release(c))
	}
	// Each held partition's answer asked with Watch carries a watch on its
	// owner node: b's release fires it.
	for p := range held {
		select {
		case ev := <-results[p].OwnerWatch:
			if ev.Type != EventNodeDeleted {
				t.Errorf("partition %d: owner watch fired %v, want the node's deletion", p, ev.Type)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("partition %d: the owner watch did not fire after b's release", p)
		}
	}
}
