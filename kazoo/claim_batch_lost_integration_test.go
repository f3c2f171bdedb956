package kazoo

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// lostBatchPartitions is how many partitions the lost-reply tests claim
// and release in one batch.
const lostBatchPartitions = 4

// A ClaimBatch whose Multi applied while its reply was lost (the proxy
// swallows it, then drops the connection): each partition goes through
// Claim alone, which finds its owner node ours, and every claim returned
// carries the epoch ZooKeeper holds, under the client's session.
func TestIntegrationClaimBatchLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, proxy := e.proxiedClient(10 * time.Second)
	a := kz.Consumergroup("g").Instance("a")
	reqs := make([]ClaimRequest, lostBatchPartitions)
	for p := range reqs {
		reqs[p] = ClaimRequest{"t", int32(p)}
	}
	var first []*PartitionClaim
	for _, r := range a.ClaimBatch(reqs) { // parents and epoch nodes
		cgNoErr(t, r.Err)
		first = append(first, r.Claim)
	}
	cgNoErr(t, errors.Join(a.ReleaseBatch(first)...))

	var exists atomic.Int32
	a.cg.testHook = func(s hookStep) error {
		if s == stepClaimExists {
			exists.Add(1)
		}
		return nil
	}
	muted := make(chan struct{})
	go func() {
		close(muted)
		proxy.LoseReplies(500 * time.Millisecond)
	}()
	<-muted
	time.Sleep(50 * time.Millisecond)
	results := a.ClaimBatch(reqs)
	if exists.Load() != lostBatchPartitions {
		t.Fatalf("%d claims met their own node, want %d: the batch's reply was not lost", exists.Load(), lostBatchPartitions)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Logf("partition %d: %v (in doubt)", i, r.Err)
			continue
		}
		if got := e.epoch("g", "t", int32(i)); r.Claim.Epoch != got || r.Claim.SessionID != kz.SessionID() {
			t.Errorf("partition %d: claim %s, ZooKeeper's epoch %d, session %#x", i, r.Claim, got, kz.SessionID())
		}
		e.assertOwner("g", "t", int32(i), "a", kz)
	}
}

// A ReleaseBatch whose Multi applied while its reply was lost: each claim
// goes through Release alone, which finds its owner node gone under the
// epoch it fenced with, and answers released.
func TestIntegrationReleaseBatchLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, proxy := e.proxiedClient(10 * time.Second)
	a := kz.Consumergroup("g").Instance("a")
	reqs := make([]ClaimRequest, lostBatchPartitions)
	for p := range reqs {
		reqs[p] = ClaimRequest{"t", int32(p)}
	}
	var claims []*PartitionClaim
	for _, r := range a.ClaimBatch(reqs) {
		cgNoErr(t, r.Err)
		claims = append(claims, r.Claim)
	}

	muted := make(chan struct{})
	go func() {
		close(muted)
		proxy.LoseReplies(500 * time.Millisecond)
	}()
	<-muted
	time.Sleep(50 * time.Millisecond)
	for i, err := range a.ReleaseBatch(claims) {
		if err != nil {
			t.Logf("partition %d: %v", i, err)
		}
	}
	for p := range int32(lostBatchPartitions) {
		if _, _, ok := e.owner("g", "t", p); ok {
			t.Errorf("partition %d: owner node survives the release", p)
		}
	}
}
