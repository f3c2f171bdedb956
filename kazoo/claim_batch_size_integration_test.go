package kazoo

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// A batch of MaxBatch partitions of a group with a long (valid) name would
// be one Multi over ZooKeeper's default jute.maxbuffer of 1 MiB, which the
// server answers by dropping the connection: every request in flight with
// it loses its reply. ClaimBatch and ReleaseBatch split it into Multis the
// server takes, and the connection stays up.
func TestIntegrationClaimBatchSplitsByRequestSize(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	group := strings.Repeat("g", 2500)
	a := kz.Consumergroup(group).Instance("a")
	reqs := make([]ClaimRequest, MaxBatch)
	for p := range reqs {
		reqs[p] = ClaimRequest{Topic: "t", Partition: int32(p)}
		// The parents and epoch nodes, one partition at a time.
		cgNoErr(t, a.Release(cgMust(a.Claim("t", int32(p))).get(t)))
	}

	var sent atomic.Int32 // the fallback claims concurrently
	a.cg.testHook = func(s hookStep) error {
		if s == stepClaimSent {
			sent.Add(1)
		}
		return nil
	}
	before, _ := kz.Session()
	var claims []*PartitionClaim
	for _, r := range a.ClaimBatch(reqs) {
		cgNoErr(t, r.Err)
		claims = append(claims, r.Claim)
	}
	a.cg.testHook = nil
	cgNoErr(t, errors.Join(a.ReleaseBatch(claims)...))
	if after, _ := kz.Session(); after.Since != before.Since || after.Status != SessionConnected {
		t.Fatalf("the connection dropped during the batches (session %+v, then %+v)", before, after)
	}
	if int(sent.Load()) >= len(reqs) {
		t.Fatalf("%d claims sent for %d partitions: the batch went one partition at a time", sent.Load(), len(reqs))
	}
}
