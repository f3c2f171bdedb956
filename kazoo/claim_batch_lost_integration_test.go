package kazoo

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/tcpproxy"
)

// lostBatchPartitions is how many partitions the lost-reply tests claim
// and release in one batch.
const lostBatchPartitions = 4

// lostReplyBatch is instance "a" of group "g" on a client behind a proxy
// that can lose ZooKeeper's replies, holding partitions 0 to
// lostBatchPartitions-1 of topic "t", claimed by one ClaimBatch.
type lostReplyBatch struct {
	kz     *Kazoo
	proxy  *tcpproxy.Proxy
	a      *ConsumergroupInstance
	reqs   []ClaimRequest
	claims []*PartitionClaim
}

func newLostReplyBatch(t *testing.T, e *cgEnv) *lostReplyBatch {
	t.Helper()
	b := &lostReplyBatch{reqs: make([]ClaimRequest, lostBatchPartitions)}
	b.kz, b.proxy = e.proxiedClient(10 * time.Second)
	b.a = b.kz.Consumergroup("g").Instance("a")
	for p := range b.reqs {
		b.reqs[p] = ClaimRequest{Topic: "t", Partition: int32(p)}
	}
	for _, r := range b.a.ClaimBatch(b.reqs) {
		cgNoErr(t, r.Err)
		b.claims = append(b.claims, r.Claim)
	}
	return b
}

// loseReplies has the proxy swallow ZooKeeper's replies for a second, then
// drop the connection, and returns while they are swallowed.
func (b *lostReplyBatch) loseReplies() {
	muted := make(chan struct{})
	go func() {
		close(muted)
		b.proxy.LoseReplies(time.Second)
	}()
	<-muted
	time.Sleep(200 * time.Millisecond) // LoseReplies has muted the proxy
}

// A ClaimBatch whose Multi applied while its reply was lost (the proxy
// swallows it, then drops the connection): each partition goes through
// Claim alone, which finds its owner node ours, and every claim returned
// carries the epoch ZooKeeper holds, under the client's session.
func TestIntegrationClaimBatchLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	b := newLostReplyBatch(t, e) // the claims made the parents and epoch nodes
	cgNoErr(t, errors.Join(b.a.ReleaseBatch(b.claims)...))

	var exists atomic.Int32
	b.a.cg.testHook = func(s hookStep) error {
		if s == stepClaimExists {
			exists.Add(1)
		}
		return nil
	}
	b.loseReplies()
	results := b.a.ClaimBatch(b.reqs)
	if exists.Load() != lostBatchPartitions {
		t.Fatalf("%d claims met their own node, want %d: the batch's reply was not lost", exists.Load(), lostBatchPartitions)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Logf("partition %d: %v (in doubt)", i, r.Err)
			continue
		}
		if got := e.epoch("g", "t", int32(i)); r.Claim.Epoch != got || r.Claim.SessionID != b.kz.SessionID() {
			t.Errorf("partition %d: claim %s, ZooKeeper's epoch %d, session %#x", i, r.Claim, got, b.kz.SessionID())
		}
		e.assertOwner("g", "t", int32(i), "a", b.kz)
	}
}

// A ReleaseBatch whose Multi applied while its reply was lost: each claim
// goes through Release alone, which finds its owner node gone under the
// epoch it fenced with, and answers released.
func TestIntegrationReleaseBatchLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	b := newLostReplyBatch(t, e)
	b.loseReplies()
	for i, err := range b.a.ReleaseBatch(b.claims) {
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

// A static instance's batch meets an owner node of its id under another
// live session (another instance with the id, or its crashed predecessor):
// the Multi is refused, that partition waits (ErrPartitionClaimedByOther)
// and keeps the other session's node and epoch, and every other partition
// is claimed alone, once, at ZooKeeper's epoch.
func TestIntegrationStaticClaimBatchWaitsForItsIDUnderAnotherSession(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzOld, kzNew := e.client(), e.client()
	old := kzOld.Consumergroup("g").StaticInstance("s", 0)
	cur := kzNew.Consumergroup("g").StaticInstance("s", 0)
	held := cgMust(old.Claim("t", 1)).get(t)
	free := cgMust(cur.Claim("t", 0)).get(t)
	cgNoErr(t, cur.Release(free))
	cgNoErr(t, cur.Release(cgMust(cur.Claim("t", 2)).get(t)))
	before := []int32{e.epoch("g", "t", 0), e.epoch("g", "t", 1), e.epoch("g", "t", 2)}

	res := cur.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}})
	cgWantErr(t, res[1].Err, ErrPartitionClaimedByOther)
	e.assertOwner("g", "t", 1, "s", kzOld)
	if got := e.epoch("g", "t", 1); got != held.Epoch {
		t.Fatalf("the held partition's epoch moved from %d to %d", held.Epoch, got)
	}
	for _, p := range []int32{0, 2} {
		r := res[p]
		cgNoErr(t, r.Err)
		if got := e.epoch("g", "t", p); r.Claim.Epoch != got || got != before[p]+1 {
			t.Fatalf("partition %d: claim %s, ZooKeeper's epoch %d, %d before the batch", p, r.Claim, got, before[p])
		}
		e.assertOwner("g", "t", p, "s", kzNew)
	}
}

// Between a batch release's reads and its Multi, another client with the
// same (dynamic) id takes one partition's node as a stale one of ours: the
// Multi is refused by that partition's epoch, the other partition is
// released alone, and the taken one answers ErrClaimLost and keeps the
// other client's node.
func TestIntegrationReleaseBatchMeetsAClaimAfterItsReads(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, kzOther := e.client(), e.client()
	a := kz.Consumergroup("g").Instance("a")
	other := kzOther.Consumergroup("g").Instance("a")
	var claims []*PartitionClaim
	for _, r := range a.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}) {
		cgNoErr(t, r.Err)
		claims = append(claims, r.Claim)
	}
	var taken *PartitionClaim
	a.cg.testHook = func(s hookStep) error {
		if s == stepReleaseDelete && taken == nil {
			taken = cgMust(other.Claim("t", 1)).get(t)
		}
		return nil
	}
	errs := a.ReleaseBatch(claims)
	a.cg.testHook = nil
	cgNoErr(t, errs[0])
	cgWantErr(t, errs[1], ErrClaimLost)
	if _, _, ok := e.owner("g", "t", 0); ok {
		t.Fatal("partition 0: owner node survives the release")
	}
	e.assertOwner("g", "t", 1, "a", kzOther)
	if got := e.epoch("g", "t", 1); got != taken.Epoch {
		t.Fatalf("partition 1: epoch %d, the other client's claim %s", got, taken)
	}
}
