package kazoo

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Claims make owner nodes at version 1, which no upstream member or
// operator's tool makes: Claim, ClaimBatch, and a claim of a node already
// ours, which reports the version it found.
func TestIntegrationClaimsMakeOwnerNodesAtVersionOne(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	a := e.client().Consumergroup("g").Instance("a")

	alone := cgMust(a.Claim("t", 0)).get(t)
	batch := a.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}})
	again := cgMust(a.Claim("t", 0)).get(t) // the node exists and is ours
	claims := []*PartitionClaim{alone, batch[0].Claim, batch[1].Claim, again}
	for i, c := range claims {
		if c == nil {
			t.Fatalf("claim %d failed: %+v", i, batch)
		}
		_, stat, ok := e.owner("g", "t", c.Partition)
		if !ok || stat.Version != 1 {
			t.Fatalf("claim %d (%s): owner node at version %v, want 1", i, c, stat)
		}
		if c.OwnerVersion != 1 {
			t.Fatalf("claim %d (%s): OwnerVersion %d, want 1", i, c, c.OwnerVersion)
		}
	}
}

// A release of claims that know their owner node's version, by a
// registered instance, reads nothing: one Multi for the batch, one for a
// single Release. An instance not registered reads, as before.
func TestIntegrationReleaseReadsNoOwnerNode(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	counter := testenv.NewZKCounter(t, testenv.ZKAddr())
	kz := cgConnect(t, []string{counter.Addr()}, e.chroot, 0)
	a := kz.Consumergroup("g").Instance("a")
	cgNoErr(t, a.Register([]string{"t"}))
	var reqs []ClaimRequest
	for p := range int32(9) {
		reqs = append(reqs, ClaimRequest{Topic: "t", Partition: p})
	}
	var claims []*PartitionClaim
	for i, r := range a.ClaimBatch(reqs) {
		if r.Err != nil {
			t.Fatalf("claim %d: %v", i, r.Err)
		}
		claims = append(claims, r.Claim)
	}

	before := counter.Counts()
	cgNoErr(t, errors.Join(a.ReleaseBatch(claims[:8])...))
	sent := counter.Counts().Minus(before)
	if sent.Reads != 0 || sent.Writes != 1 {
		t.Fatalf("ReleaseBatch of 8 claims sent %d reads and %d writes, want 0 and 1", sent.Reads, sent.Writes)
	}

	before = counter.Counts()
	cgNoErr(t, a.Release(claims[8]))
	sent = counter.Counts().Minus(before)
	if sent.Reads != 0 || sent.Writes != 1 {
		t.Fatalf("Release sent %d reads and %d writes, want 0 and 1", sent.Reads, sent.Writes)
	}
	for p := range int32(9) {
		if _, _, ok := e.owner("g", "t", p); ok {
			t.Fatalf("partition %d: owner node survives the release", p)
		}
	}

	// Not registered (any more): the release reads, as before.
	c := cgMust(a.Claim("t", 0)).get(t)
	cgNoErr(t, a.Deregister())
	before = counter.Counts()
	cgNoErr(t, a.Release(c))
	if sent = counter.Counts().Minus(before); sent.Reads != 1 || sent.Writes != 1 {
		t.Fatalf("Release of an instance not registered sent %d reads and %d writes, want 1 and 1", sent.Reads, sent.Writes)
	}
}

// A release without a read never deletes a node that is not its claim's,
// although the epoch did not move: here our node went (as with an expired
// session) and an upstream member, which keeps no epochs, created its own
// at version 0. The release is refused (ErrClaimLost, as a read finds
// another's node) and the upstream member's node stays; the batch's other
// claim is released.
func TestIntegrationReleaseLeavesAnUpstreamMembersNode(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	a := e.client().Consumergroup("g").Instance("a")
	cgNoErr(t, a.Register([]string{"t"}))
	upstream := e.client()
	var claims []*PartitionClaim
	for p := range int32(3) {
		claims = append(claims, cgMust(a.Claim("t", p)).get(t))
	}
	takeOver := func(p int32) {
		t.Helper()
		e.expireOwner("g", "t", p)
		node := upstream.ownerPath("g", "t", p)
		if _, err := upstream.conn.Create(node, []byte("upstream"), zk.FlagEphemeral, upstream.acl); err != nil {
			t.Fatalf("upstream member's claim of %s: %v", node, err)
		}
	}
	takeOver(0)
	takeOver(1)

	cgWantErr(t, a.Release(claims[0]), ErrClaimLost)
	errs := a.ReleaseBatch(claims[1:])
	cgWantErr(t, errs[0], ErrClaimLost)
	cgNoErr(t, errs[1])
	for p := range int32(2) {
		if id, _, ok := e.owner("g", "t", p); !ok || id != "upstream" {
			t.Fatalf("partition %d: owner node %q (exists %v), want the upstream member's", p, id, ok)
		}
	}
	if _, _, ok := e.owner("g", "t", 2); ok {
		t.Fatal("partition 2: owner node survives the batch release")
	}
}

// The window the model found (find-7 in model/README.md) in a release that
// reads: it reads our node, our session expires, and an upstream member,
// which keeps no epochs, creates its node before the fenced delete. The
// epoch has not moved; only the version tells the nodes apart, ours at 1,
// the upstream member's at 0. Before owner nodes were made at version 1
// the delete, at version 0, removed the upstream member's node.
func TestIntegrationReadingReleaseLeavesAnUpstreamMembersNode(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")
	a := cg.Instance("a")
	upstream := e.client()
	node := upstream.ownerPath("g", "t", 0)
	cgMust(a.Claim("t", 0)).get(t)
	replaced := false
	cg.testHook = func(s hookStep) error {
		if s == stepReleaseDelete && !replaced {
			replaced = true
			e.expireOwner("g", "t", 0)
			if _, err := upstream.conn.Create(node, []byte("upstream"), zk.FlagEphemeral, upstream.acl); err != nil {
				t.Errorf("upstream member's claim of %s: %v", node, err)
			}
		}
		return nil
	}
	err := a.ReleasePartition("t", 0)
	cg.testHook = nil
	if !replaced {
		t.Fatal("the race was not exercised")
	}
	cgWantBare(t, err, ErrPartitionNotClaimed)
	if id, _, ok := e.owner("g", "t", 0); !ok || id != "upstream" {
		t.Fatalf("owner node %q (exists %v), want the upstream member's", id, ok)
	}
}
