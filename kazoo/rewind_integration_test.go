package kazoo

import "testing"

// RewindOffsetFenced is the owner's own reset: it stores a lower offset
// only while the claim holds, in one transaction with an epoch bump that
// ends the claim, so commits under that claim are refused afterwards. A
// claim that moved on changes nothing.
func TestIntegrationRewindOffsetFenced(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	g := kz.Consumergroup("g")
	a := g.Instance("a")

	c := cgMust(a.Claim("t", 0)).get(t)
	v, err := a.CommitOffsetFenced(c, 1000, -1)
	cgNoErr(t, err)
	before := e.epoch("g", "t", 0)
	cgNoErr(t, a.RewindOffsetFenced(c, 5, v))
	if got, err := g.FetchOffset("t", 0); err != nil || got != 5 {
		t.Fatalf("offset after the rewind: %d (%v), want 5", got, err)
	}
	if after := e.epoch("g", "t", 0); after != before+1 {
		t.Errorf("epoch %d after the rewind, want %d: the rewind must end the claim", after, before+1)
	}
	_, err = a.CommitOffsetFenced(c, 6, v+1)
	cgWantErr(t, err, ErrClaimLost) // the rewound claim commits nothing more
	cgWantErr(t, a.RewindOffsetFenced(c, 0, v+1), ErrClaimLost)
	if got, _ := g.FetchOffset("t", 0); got != 5 {
		t.Errorf("offset %d after refused writes, want 5", got)
	}

	// A conflict: the offset node moved underneath.
	c2 := cgMust(a.Claim("t", 0)).get(t)
	err = a.RewindOffsetFenced(c2, 0, 0) // the node is at version 1
	assertConflict(t, err, 5, 1)
	if got, _ := g.FetchOffset("t", 0); got != 5 {
		t.Errorf("offset %d after a conflict, want 5", got)
	}
}

// A fenced commit refused because the offset node moved reads the node to
// report the conflict. A reset between the refusal and that read (it
// deletes the node and bumps the epoch in one transaction) is a lost claim,
// not a conflict with "nothing stored": the owner must stop, not seek to
// the reset's value under a claim that is gone. (A commit of ours whose
// reply was lost is refused this way, and was taken for someone else's.)
func TestIntegrationConflictReadAfterResetIsALoss(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	g := kz.Consumergroup("g")
	a := g.Instance("a")
	c := cgMust(a.Claim("t", 0)).get(t)
	v, err := a.CommitOffsetFenced(c, 10, -1)
	cgNoErr(t, err)
	_, err = a.CommitOffsetFenced(c, 20, v) // applied, "reply lost": v is stale now
	cgNoErr(t, err)

	g.testHook = func(s hookStep) error {
		if s == stepConflictRead {
			cgNoErr(t, e.admin.Consumergroup("g").ResetOffsets())
		}
		return nil
	}
	_, err = a.CommitOffsetFenced(c, 30, v)
	g.testHook = nil
	cgWantErr(t, err, ErrClaimLost)
}
