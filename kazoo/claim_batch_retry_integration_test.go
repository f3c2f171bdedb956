package kazoo

import (
	"errors"
	"sync/atomic"
	"testing"
)

// retryBatchPartitions is how many partitions the retry tests claim and
// release in one batch; retryHeld is the one another instance holds.
const (
	retryBatchPartitions = 6
	retryHeld            = 2
)

// A batch of which one partition is still owned by another instance: the
// refused Multi names that partition, which gets Claim's answer (from a
// read of its owner node, see answerHeldByOthers), and the others are
// claimed together in one more Multi. Likewise a batch release of which one claim's epoch moved: that
// claim goes through Release alone (ErrClaimLost, its node stays), the
// others are released in one more Multi.
func TestIntegrationBatchRetriesTheRestAfterARefusal(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	a := kzA.Consumergroup("g").Instance("a")
	b := kzB.Consumergroup("g").Instance("b")
	reqs := make([]ClaimRequest, retryBatchPartitions)
	for p := range reqs {
		reqs[p] = ClaimRequest{Topic: "t", Partition: int32(p)}
		// The parents and epoch nodes, one partition at a time.
		cgNoErr(t, a.Release(cgMust(a.Claim("t", int32(p))).get(t)))
	}
	held := cgMust(b.Claim("t", retryHeld)).get(t)

	var batches, sent, exists, releaseDeletes atomic.Int32
	a.cg.testHook = func(s hookStep) error {
		switch s {
		case stepBatchSend:
			batches.Add(1)
		case stepClaimSent:
			sent.Add(1)
		case stepClaimExists:
			exists.Add(1)
		case stepReleaseDelete:
			releaseDeletes.Add(1)
		}
		return nil
	}
	results := a.ClaimBatch(reqs)
	var claims []*PartitionClaim
	for p, r := range results {
		if p == retryHeld {
			if !errors.Is(r.Err, ErrPartitionClaimedByOther) {
				t.Fatalf("partition held by b: %+v, want ErrPartitionClaimedByOther", r)
			}
			continue
		}
		if r.Err != nil || r.Claim.Epoch != e.epoch("g", "t", int32(p)) {
			t.Fatalf("partition %d: %+v", p, r)
		}
		e.assertOwner("g", "t", int32(p), "a", kzA)
		claims = append(claims, r.Claim)
	}
	e.assertOwner("g", "t", retryHeld, "b", kzB)
	if sent.Load() != 1 || exists.Load() != 0 {
		t.Fatalf("%d claim Multis applied and %d single claims met an owner node, want 1 and 0: "+
			"the free partitions were not claimed together", sent.Load(), exists.Load())
	}
	if n := batches.Swap(0); n != 2 {
		t.Fatalf("%d batch Multis of claims, want 2: the refused one and its rest", n)
	}

	// The first claim's epoch moves under it (as a reset's bump would).
	lost := claims[0]
	if _, err := e.admin.conn.Set(kzA.epochPath("g", "t", lost.Partition), nil, -1); err != nil {
		t.Fatal(err)
	}
	errs := a.ReleaseBatch(claims)
	cgWantErr(t, errs[0], ErrClaimLost)
	cgNoErr(t, errors.Join(errs[1:]...))
	if _, _, ok := e.owner("g", "t", lost.Partition); !ok {
		t.Fatal("a release whose epoch moved deleted the owner node")
	}
	for _, c := range claims[1:] {
		if _, _, ok := e.owner("g", "t", c.Partition); ok {
			t.Fatalf("partition %d: owner node survives the batch release", c.Partition)
		}
	}
	// The batch's deletes are about to go once, before its Multis; the lost
	// claim's Release (reading, after the batch's refusal) once more.
	if releaseDeletes.Load() != 2 {
		t.Fatalf("%d release deletes about to be sent, want 2: the claims still held were not released together", releaseDeletes.Load())
	}
	if batches.Load() != 2 {
		t.Fatalf("%d batch Multis of releases, want 2: the refused one and its rest", batches.Load())
	}
	a.cg.testHook = nil
	cgNoErr(t, b.Release(held))
}
