package kazoo

import (
	"errors"
	"maps"
	"testing"
)

// A fenced set on a partition nobody ever claimed creates the offset node
// and the epoch node; on an owned partition it replaces the offset and
// ends the owner's claim, so the owner's next commit changes nothing.
func TestIntegrationResetOffsetFencesOwner(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	operator := e.admin.Consumergroup("g")

	cgNoErr(t, operator.ResetOffset("fresh", 3, 17))
	if off := cgMust(operator.FetchOffset("fresh", 3)).get(t); off != 17 {
		t.Fatalf("offset after a set on a fresh partition = %d, want 17", off)
	}
	if v := e.epoch("g", "fresh", 3); v != 0 {
		t.Fatalf("epoch node created with version %d, want 0", v)
	}

	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	c := cgMust(a.Claim("t", 0)).get(t)
	v := cgMust(a.CommitOffsetFenced(c, 100, -1)).get(t)
	before := e.epoch("g", "t", 0)

	cgNoErr(t, operator.ResetOffset("t", 0, 40))
	if got := e.epoch("g", "t", 0); got != before+1 {
		t.Fatalf("epoch after the set = %d, want %d", got, before+1)
	}
	if _, err := a.CommitOffsetFenced(c, 101, v); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("owner's commit after the set: %v, want ErrClaimLost", err)
	}
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != 40 {
		t.Fatalf("offset = %d after the set and a refused commit, want 40", off)
	}
	// A new claim reads the operator's offset and commits from there.
	cgNoErr(t, a.ReleaseAfterLoss(c))
	c = cgMust(a.Claim("t", 0)).get(t)
	off, ver, err := operator.FetchOffsetVersion("t", 0)
	cgNoErr(t, err)
	if off != 40 {
		t.Fatalf("the new claim reads %d, want 40", off)
	}
	cgMust(a.CommitOffsetFenced(c, 41, ver)).get(t)

	if err := operator.ResetOffset("t", 0, -1); err == nil {
		t.Fatal("a negative offset was accepted")
	}
}

// Race: the set finds no offset node, and before its transaction the
// owner's first commit creates one. The transaction fails on the create,
// the set looks again and overwrites the commit, bumping the epoch.
func TestIntegrationResetOffsetRacesFirstCommit(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	operator := e.admin.Consumergroup("g")

	c := cgMust(a.Claim("t", 0)).get(t)
	var commitErr error
	fired := 0
	operator.testHook = func(s hookStep) error {
		if s == stepResetRead && fired == 0 {
			fired++
			_, commitErr = a.CommitOffsetFenced(c, 42, -1)
		}
		return nil
	}
	cgNoErr(t, operator.ResetOffset("t", 0, 7))
	operator.testHook = nil
	if fired != 1 {
		t.Fatal("the race was not exercised")
	}
	cgNoErr(t, commitErr)
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != 7 {
		t.Fatalf("offset = %d, want the operator's 7", off)
	}
	if _, err := a.CommitOffsetFenced(c, 43, 0); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("owner's commit after the set: %v, want ErrClaimLost", err)
	}
}

// Race: the set finds no epoch node, and before its transaction a member
// claims (creating the node). The transaction's create fails, the set
// looks again and bumps the epoch, ending that claim.
func TestIntegrationResetOffsetRacesFirstClaim(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	operator := e.admin.Consumergroup("g")

	var c *PartitionClaim
	var claimErr error
	fired := 0
	operator.testHook = func(s hookStep) error {
		if s == stepResetRead && fired == 0 {
			fired++
			c, claimErr = a.Claim("t", 0)
		}
		return nil
	}
	cgNoErr(t, operator.ResetOffset("t", 0, 5))
	operator.testHook = nil
	cgNoErr(t, claimErr)
	if e.epoch("g", "t", 0) == c.Epoch {
		t.Fatal("the set did not move the epoch of the claim made before its transaction")
	}
	if _, err := a.CommitOffsetFenced(c, 9, 0); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("commit of the earlier claim: %v, want ErrClaimLost", err)
	}
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != 5 {
		t.Fatalf("offset = %d, want 5", off)
	}
}

// The bulk set writes every partition (owned or not, with or without
// nodes) and bumps every epoch; bad arguments write nothing.
func TestIntegrationResetOffsetsTo(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	operator := e.admin.Consumergroup("g")
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	c := cgMust(a.Claim("t1", 5)).get(t)
	cgNoErr(t, operator.CommitOffset("t1", 6, 1000))

	want := map[string]map[int32]int64{"t1": {}, "t2": {}}
	for p := range int32(100) {
		want["t1"][p] = int64(p) * 3
		if p < 20 {
			want["t2"][p] = int64(p)
		}
	}
	cgNoErr(t, operator.ResetOffsetsTo(want))
	got := cgMust(operator.FetchAllOffsets()).get(t)
	if len(got) != 2 || !maps.Equal(got["t1"], want["t1"]) || !maps.Equal(got["t2"], want["t2"]) {
		t.Fatalf("offsets after the bulk set = %v, want %v", got, want)
	}
	if _, err := a.CommitOffsetFenced(c, 1, 0); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("owner's commit after the bulk set: %v, want ErrClaimLost", err)
	}

	bad := map[string]map[int32]int64{"t1": {0: 1, 1: -5}}
	if err := operator.ResetOffsetsTo(bad); err == nil {
		t.Fatal("a negative offset was accepted")
	}
	if off := cgMust(operator.FetchOffset("t1", 0)).get(t); off != 0 {
		t.Fatalf("a refused bulk set wrote partition 0: %d", off)
	}
}
