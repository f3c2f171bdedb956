package kazoo

import (
	"errors"
	"testing"
)

// A batch claims the free partitions of a topic in one Multi (new parents
// and epoch nodes included, through the fallback), answers a partition
// held by another instance as Claim does, and a batch release deletes
// only the owner nodes its claims still fence: a claim whose epoch moved
// gets ErrClaimLost and its node stays.
func TestIntegrationClaimAndReleaseBatch(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	a := kzA.Consumergroup("g").Instance("a")
	b := kzB.Consumergroup("g").Instance("b")

	// First claims of the topic: no parents, no epoch nodes yet.
	first := a.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}})
	var claims []*PartitionClaim
	for i, r := range first {
		if r.Err != nil || r.Claim == nil || r.Claim.Partition != int32(i) || r.Claim.SessionID != kzA.SessionID() {
			t.Fatalf("first batch, partition %d: %+v", i, r)
		}
		claims = append(claims, r.Claim)
	}
	cgNoErr(t, errors.Join(a.ReleaseBatch(claims)...))
	for p := range int32(3) {
		if _, _, ok := e.owner("g", "t", p); ok {
			t.Fatalf("partition %d: owner node survives the batch release", p)
		}
	}

	// Epoch nodes exist now: one Multi (one claim sent) claims all three,
	// each at its own new epoch.
	sent := 0
	a.cg.testHook = func(s hookStep) error {
		if s == stepClaimSent {
			sent++
		}
		return nil
	}
	second := a.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}})
	for i, r := range second {
		if r.Err != nil || r.Claim.Epoch != claims[i].Epoch+1 || r.Claim.Epoch != e.epoch("g", "t", int32(i)) {
			t.Fatalf("second batch, partition %d: %+v (first claim %s)", i, r, claims[i])
		}
		e.assertOwner("g", "t", int32(i), "a", kzA)
	}
	if sent != 1 {
		t.Fatalf("%d claims sent for a batch of three free partitions, want one Multi", sent)
	}
	a.cg.testHook = nil

	// A partition held by another instance refuses the Multi: it, and the
	// one partition left beside it, are claimed alone and get Claim's
	// answer.
	held := cgMust(b.Claim("t", 3)).get(t)
	third := a.ClaimBatch([]ClaimRequest{{Topic: "t", Partition: 4}, {Topic: "t", Partition: 3}})
	if third[0].Err != nil {
		t.Fatalf("free partition beside a held one: %v", third[0].Err)
	}
	if !errors.Is(third[1].Err, ErrPartitionClaimedByOther) {
		t.Fatalf("partition held by b: %+v, want ErrPartitionClaimedByOther", third[1])
	}
	e.assertOwner("g", "t", 3, "b", kzB)
	cgNoErr(t, a.Release(third[0].Claim))

	// Partition 1's epoch moves under a's claim (as a reset's bump would):
	// the batch release is refused as a whole, partition 1 goes alone and
	// the other two in one more Multi.
	if _, err := e.admin.conn.Set(kzA.epochPath("g", "t", 1), nil, -1); err != nil {
		t.Fatal(err)
	}
	errs := a.ReleaseBatch([]*PartitionClaim{second[0].Claim, second[1].Claim, second[2].Claim})
	cgNoErr(t, errs[0])
	cgWantErr(t, errs[1], ErrClaimLost)
	cgNoErr(t, errs[2])
	if _, _, ok := e.owner("g", "t", 1); !ok {
		t.Fatal("a release whose epoch moved deleted the owner node")
	}
	for _, p := range []int32{0, 2} {
		if _, _, ok := e.owner("g", "t", p); ok {
			t.Fatalf("partition %d: owner node survives the batch release", p)
		}
	}
	cgNoErr(t, b.Release(held))
}
