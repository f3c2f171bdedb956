package kazoo

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// The fenced primitives, without races.
func TestIntegrationClaimReleaseCommitFenced(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")
	a := cg.Instance("a")

	c1 := cgMust(a.Claim("t", 0)).get(t)
	if c1.Topic != "t" || c1.Partition != 0 || c1.InstanceID != "a" || c1.SessionID != kz.SessionID() || c1.Epoch < 1 {
		t.Fatalf("claim = %s", c1)
	}
	if ep := e.epoch("g", "t", 0); ep != c1.Epoch {
		t.Fatalf("epoch node at %d, claim says %d", ep, c1.Epoch)
	}
	e.assertOwner("g", "t", 0, "a", kz)

	// Offsets: -1 creates, then each commit passes the version it got.
	v := cgMust(a.CommitOffsetFenced(c1, 100, -1)).get(t)
	if v != 0 {
		t.Fatalf("first commit version = %d, want 0", v)
	}
	v = cgMust(a.CommitOffsetFenced(c1, 150, v)).get(t)
	if off, ver, err := cg.FetchOffsetVersion("t", 0); off != 150 || ver != v || err != nil {
		t.Fatalf("FetchOffsetVersion = %d, %d, %v; want 150, %d", off, ver, err, v)
	}
	if data, stat, err := e.admin.conn.Get(kz.offsetPath("g", "t", 0)); err != nil || string(data) != "150" || stat.Mtime == 0 {
		t.Fatalf("offset node = %q, %v", data, err)
	}
	if _, err := a.CommitOffsetFenced(c1, -1, v); err == nil {
		t.Fatal("negative offset accepted")
	}
	if _, err := cg.Instance("b").CommitOffsetFenced(c1, 1, v); err == nil {
		t.Fatal("another instance used a's claim")
	}

	// Claiming again under the same session bumps the epoch: the older
	// claim no longer fences anything.
	c2 := cgMust(a.Claim("t", 0)).get(t)
	if c2.Epoch <= c1.Epoch {
		t.Fatalf("re-claim epoch %d, first %d", c2.Epoch, c1.Epoch)
	}
	_, err := a.CommitOffsetFenced(c1, 160, v)
	cgWantErr(t, err, ErrClaimLost)
	cgWantErr(t, a.Release(c1), ErrClaimLost)
	e.assertOwner("g", "t", 0, "a", kz)

	// Another instance, same session: claimed by other, named.
	_, err = cg.Instance("b").Claim("t", 0)
	if !errors.Is(err, ErrPartitionClaimedByOther) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("claim of a's partition by b: %v", err)
	}

	cgNoErr(t, a.Release(c2))
	if _, _, ok := e.owner("g", "t", 0); ok {
		t.Fatal("owner node survives Release")
	}
	cgNoErr(t, a.Release(c2)) // already released, epoch unchanged: fine
	if ep := e.epoch("g", "t", 0); ep != c2.Epoch {
		t.Fatalf("Release moved the epoch: %d -> %d", c2.Epoch, ep)
	}
	c3 := cgMust(cg.Instance("b").Claim("t", 0)).get(t)
	if c3.Epoch != c2.Epoch+1 {
		t.Fatalf("epoch after release and claim = %d, want %d", c3.Epoch, c2.Epoch+1)
	}
	cgWantErr(t, a.Release(c2), ErrClaimLost)
	e.assertOwner("g", "t", 0, "b", kz)
}

// Race: the owner deletes its node between our NodeExists and our read.
// kazoo-go returns the read's NoNode and leaves the partition unowned; we
// create again.
func TestIntegrationClaimRaceOwnerVanishes(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	a := kzA.Consumergroup("g").Instance("a")
	cgB := kzB.Consumergroup("g")
	b := cgB.Instance("b")

	for _, legacy := range []bool{false, true} {
		ca := cgMust(a.Claim("t", 0)).get(t)
		fired := 0
		cgB.testHook = func(s hookStep) error {
			if s == stepClaimExists && fired == 0 {
				fired++
				if legacy {
					return a.ReleasePartition("t", 0)
				}
				return a.Release(ca)
			}
			return nil
		}
		if legacy {
			cgNoErr(t, b.ClaimPartition("t", 0))
		} else {
			cb := cgMust(b.Claim("t", 0)).get(t)
			if cb.Epoch <= ca.Epoch || cb.SessionID != kzB.SessionID() {
				t.Fatalf("claim after the owner left: %s (previous %s)", cb, ca)
			}
		}
		cgB.testHook = nil
		if fired != 1 {
			t.Fatal("the race was not exercised")
		}
		e.assertOwner("g", "t", 0, "b", kzB)
		cgNoErr(t, b.ReleasePartition("t", 0))
	}
}

// Race: the reply to our claim's Multi is lost (the connection drops after
// the server applied it). Claiming again must recognise the node as ours by
// its session, and hand out a valid epoch.
func TestIntegrationClaimRaceLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")
	a := cg.Instance("a")

	lost := false
	cg.testHook = func(s hookStep) error {
		if s == stepClaimSent && !lost {
			lost = true
			return zk.ErrConnectionClosed
		}
		return nil
	}
	_, err := a.Claim("t", 0)
	if !IsRetryable(err) {
		t.Fatalf("lost reply: err = %v, want a retryable error", err)
	}
	e.assertOwner("g", "t", 0, "a", kz) // the server did create it
	lostEpoch := e.epoch("g", "t", 0)

	// Another instance on the same session is not us.
	cgWantErr(t, second(cg.Instance("b").Claim("t", 0)), ErrPartitionClaimedByOther)
	cgWantBare(t, cg.Instance("b").ClaimPartition("t", 0), ErrPartitionClaimedByOther)

	c := cgMust(a.Claim("t", 0)).get(t)
	if c.SessionID != kz.SessionID() || c.Epoch <= lostEpoch || c.Epoch != e.epoch("g", "t", 0) {
		t.Fatalf("claim after a lost reply = %s; lost epoch %d, epoch node %d", c, lostEpoch, e.epoch("g", "t", 0))
	}
	e.assertOwner("g", "t", 0, "a", kz)
	// The epoch is valid: commits and the release go through.
	v := cgMust(a.CommitOffsetFenced(c, 10, -1)).get(t)
	cgMust(a.CommitOffsetFenced(c, 11, v)).get(t)
	cgNoErr(t, a.ClaimPartition("t", 0)) // the kazoo-go call agrees it is ours
	c = cgMust(a.Claim("t", 0)).get(t)
	cgNoErr(t, a.Release(c))
}

// Race: a node with our id, left by an older session of ours that the
// server has not expired yet (a restarted process, or a client cut off from
// ZooKeeper). kazoo-go compares the data, calls the node its own and
// returns: the partition is then lost when that old session expires. We
// remove the stale node by its exact version and claim it for the current
// session.
func TestIntegrationClaimRaceStaleNodeOfOlderSession(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzOld, proxy := e.proxiedClient(10 * time.Second) //: it must not expire during the test
	kzNew := e.client()
	old := kzOld.Consumergroup("g").Instance("x")
	cur := kzNew.Consumergroup("g").Instance("x")

	cOld := cgMust(old.Claim("t", 0)).get(t)
	vOld := cgMust(old.CommitOffsetFenced(cOld, 5, -1)).get(t)
	cOld1 := cgMust(old.Claim("t", 1)).get(t)
	proxy.Cut() // the old client is gone, its session still alive on the server

	c := cgMust(cur.Claim("t", 0)).get(t)
	if c.SessionID != kzNew.SessionID() || c.Epoch <= cOld.Epoch {
		t.Fatalf("claim over a stale node = %s, stale claim %s", c, cOld)
	}
	e.assertOwner("g", "t", 0, "x", kzNew)
	cgNoErr(t, cur.ClaimPartition("t", 1)) // the kazoo-go call does the same
	e.assertOwner("g", "t", 1, "x", kzNew)

	// The old client comes back: its claims are fenced off...
	proxy.Restore()
	waitSession(t, kzOld, 10*time.Second, "reconnected", func(s Session) bool { return s.Status == SessionConnected })
	_, err := old.CommitOffsetFenced(cOld, 1, vOld)
	cgWantErr(t, err, ErrClaimLost)
	cgWantErr(t, old.Release(cOld), ErrClaimLost)
	cgWantErr(t, old.Release(cOld1), ErrClaimLost)
	cgWantBare(t, old.ReleasePartition("t", 0), ErrPartitionNotClaimed)
	if off := cgMust(kzNew.Consumergroup("g").FetchOffset("t", 0)).get(t); off != 5 {
		t.Fatalf("zombie commit moved the offset to %d", off)
	}
	// ...and when its session ends, the new claims survive.
	cgNoErr(t, kzOld.Close())
	e.assertOwner("g", "t", 0, "x", kzNew)
	e.assertOwner("g", "t", 1, "x", kzNew)
}

// Race: before a release's delete (after it read the owner node as ours,
// or without a read), the server expires our session and another instance
// claims. kazoo-go then deletes with the version it read, which the new
// owner's fresh node also has: the new claim is gone. Ours is fenced by
// the epoch.
func TestIntegrationClaimRaceLateRelease(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	cgA := kzA.Consumergroup("g")
	a := cgA.Instance("a")
	b := kzB.Consumergroup("g").Instance("b")
	cgNoErr(t, a.Register([]string{"t"})) // so that a.Release deletes without a read first

	for i, release := range []func(*PartitionClaim) error{
		func(*PartitionClaim) error { return a.ReleasePartition("t", 0) },
		a.Release,
	} {
		ca := cgMust(a.Claim("t", 0)).get(t)
		_, was, _ := e.owner("g", "t", 0)
		var cb *PartitionClaim
		cgA.testHook = func(s hookStep) error {
			if s == stepReleaseDelete && cb == nil {
				e.expireOwner("g", "t", 0)
				cb = cgMust(b.Claim("t", 0)).get(t)
				if _, stat, _ := e.owner("g", "t", 0); stat.Version != was.Version {
					t.Fatalf("new owner node version %d; the test needs %d, the version of ours", stat.Version, was.Version)
				}
			}
			return nil
		}
		err := release(ca)
		cgA.testHook = nil
		if cb == nil {
			t.Fatal("the race was not exercised")
		}
		if i == 0 {
			cgWantBare(t, err, ErrPartitionNotClaimed)
		} else {
			cgWantErr(t, err, ErrClaimLost)
		}
		e.assertOwner("g", "t", 0, "b", kzB) // the new owner's node survives
		cgNoErr(t, b.Release(cb))
	}

	// Without the seam: the late Release of a claim whose node is gone and
	// re-claimed by someone else.
	ca := cgMust(a.Claim("t", 1)).get(t)
	e.expireOwner("g", "t", 1)
	cgMust(b.Claim("t", 1)).get(t)
	cgWantErr(t, a.Release(ca), ErrClaimLost)
	cgWantBare(t, a.ReleasePartition("t", 1), ErrPartitionNotClaimed)
	e.assertOwner("g", "t", 1, "b", kzB)
}

// Race: a zombie (its session expired on the server, its claim taken over)
// commits late. kazoo-go's CommitOffset overwrites the new owner's offset,
// moving it backwards. The fenced commit is refused and changes nothing.
func TestIntegrationClaimRaceZombieCommit(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kzA, kzB := e.client(), e.client()
	a := kzA.Consumergroup("g").Instance("a")
	b := kzB.Consumergroup("g").Instance("b")
	cg := e.admin.Consumergroup("g")

	ca := cgMust(a.Claim("t", 0)).get(t)
	va := cgMust(a.CommitOffsetFenced(ca, 100, -1)).get(t)

	e.expireOwner("g", "t", 0)
	cb := cgMust(b.Claim("t", 0)).get(t)
	_, vb, err := cg.FetchOffsetVersion("t", 0)
	cgNoErr(t, err)

	// The zombie's commit, with the offset version it last saw (still
	// current): refused because the epoch moved.
	_, err = a.CommitOffsetFenced(ca, 90, va)
	cgWantErr(t, err, ErrClaimLost)
	var conflict *OffsetConflictError
	if errors.As(err, &conflict) {
		t.Fatalf("zombie commit reported as an offset conflict: %v", err)
	}
	if off, v, _ := cg.FetchOffsetVersion("t", 0); off != 100 || v != va {
		t.Fatalf("after the zombie commit: offset %d version %d, want 100 version %d", off, v, va)
	}
	// Epoch moved and offset changed: the lost claim wins the report.
	vb = cgMust(b.CommitOffsetFenced(cb, 200, vb)).get(t)
	_, err = a.CommitOffsetFenced(ca, 90, va)
	cgWantErr(t, err, ErrClaimLost)
	_, err = a.CommitOffsetFenced(ca, 90, -1)
	cgWantErr(t, err, ErrClaimLost)
	if off, v, _ := cg.FetchOffsetVersion("t", 0); off != 200 || v != vb {
		t.Fatalf("offset %d version %d, want 200 version %d", off, v, vb)
	}
}

// Race: an operator resets the offset while the owner commits. kazoo-go
// overwrites the reset. The fenced commit reports the conflict with what
// is stored, and changes nothing.
func TestIntegrationClaimRaceOffsetReset(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	operator := e.admin.Consumergroup("g")

	c := cgMust(a.Claim("t", 0)).get(t)
	v := cgMust(a.CommitOffsetFenced(c, 100, -1)).get(t)

	// Reset to a value: a set of the node.
	cgNoErr(t, operator.CommitOffset("t", 0, 5))
	_, err := a.CommitOffsetFenced(c, 120, v)
	conflict := assertConflict(t, err, 5, v+1)
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != 5 {
		t.Fatalf("conflicting commit changed the offset to %d", off)
	}
	// The owner adopts the stored value and goes on from its version.
	v = cgMust(a.CommitOffsetFenced(c, 6, conflict.Version)).get(t)

	// Reset by deletion (ResetOffsets) fences the owner: it bumps the epoch
	// with the deletion, so the owner's commit is refused as a lost claim
	// and changes nothing; claiming again, it reads no stored offset.
	cgNoErr(t, operator.ResetOffsets())
	_, err = a.CommitOffsetFenced(c, 7, v)
	cgWantErr(t, err, ErrClaimLost)
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != -1 {
		t.Fatalf("fenced commit recreated the offset: %d", off)
	}
	c = cgMust(a.Claim("t", 0)).get(t)
	v = cgMust(a.CommitOffsetFenced(c, 7, -1)).get(t)
	if v != 0 {
		t.Fatalf("version of a recreated offset node = %d", v)
	}

	// A node deleted by hand (not through ResetOffsets) while we expect a
	// version: a conflict reporting it missing.
	e.zkDelete(t, kz.offsetPath("g", "t", 0))
	_, err = a.CommitOffsetFenced(c, 8, v)
	assertConflict(t, err, -1, -1)

	// Created by someone else while we expected none.
	cgNoErr(t, operator.CommitOffset("t", 1, 33))
	c1 := cgMust(a.Claim("t", 1)).get(t)
	_, err = a.CommitOffsetFenced(c1, 40, -1)
	assertConflict(t, err, 33, 0)
}

// Race (version reuse): the owner holds version 0 of the offset node, an
// operator resets the group's offsets, and someone commits again, creating
// the node afresh at version 0. The old owner's commit expecting version 0
// must not overwrite it. Fails if ResetOffsets does not bump the epoch.
func TestIntegrationClaimRaceResetThenRecreate(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	operator := e.admin.Consumergroup("g")

	c := cgMust(a.Claim("t", 0)).get(t)
	v := cgMust(a.CommitOffsetFenced(c, 100, -1)).get(t)
	cgNoErr(t, operator.ResetOffsets())
	cgNoErr(t, operator.CommitOffset("t", 0, 3)) // a new commit, at version 0 again
	if _, ver, _ := operator.FetchOffsetVersion("t", 0); ver != v {
		t.Fatalf("re-created node at version %d, the owner holds %d: no version reuse to test", ver, v)
	}
	_, err := a.CommitOffsetFenced(c, 120, v)
	cgWantErr(t, err, ErrClaimLost)
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != 3 {
		t.Fatalf("the old owner overwrote the reset: offset %d, want 3", off)
	}
	cgWantErr(t, a.Release(c), ErrClaimLost)
}

// WatchClaim tells an owner of every way its claim can end: its owner node
// deleted by an operator, a reset, the epoch node created again.
func TestIntegrationWatchClaim(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")

	// Owner node deleted by hand.
	c := cgMust(a.Claim("t", 0)).get(t)
	w := cgMust(a.WatchClaim(c)).get(t)
	e.zkDelete(t, kz.ownerPath("g", "t", 0))
	cgWatchEvent(t, w, EventNodeDeleted)
	_, err := a.WatchClaim(c)
	cgWantErr(t, err, ErrClaimLost)

	// A reset bumps the epoch.
	c = cgMust(a.Claim("t", 0)).get(t)
	w = cgMust(a.WatchClaim(c)).get(t)
	cgNoErr(t, e.admin.Consumergroup("g").ResetOffsets())
	cgWatchEvent(t, w, EventNodeDataChanged)
	_, err = a.WatchClaim(c)
	cgWantErr(t, err, ErrClaimLost)

	// The epoch node deleted and created again, then bumped back to the
	// claim's version: the czxid tells.
	c = cgMust(a.Claim("t", 0)).get(t)
	w = cgMust(a.WatchClaim(c)).get(t)
	epoch := kz.epochPath("g", "t", 0)
	e.zkDelete(t, epoch)
	cgWatchEvent(t, w, EventNodeDeleted)
	if _, err := e.admin.conn.Create(epoch, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < c.Epoch; i++ {
		if _, err := e.admin.conn.Set(epoch, nil, -1); err != nil {
			t.Fatal(err)
		}
	}
	_, err = a.WatchClaim(c)
	cgWantErr(t, err, ErrClaimLost)

	// A claim that holds: no event, and the watch fires on release.
	c = cgMust(a.Claim("t", 1)).get(t)
	w = cgMust(a.WatchClaim(c)).get(t)
	select {
	case ev := <-w:
		t.Fatalf("event %v on an untouched claim", ev)
	case <-time.After(100 * time.Millisecond):
	}
	cgNoErr(t, a.Release(c))
	cgWatchEvent(t, w, EventNodeDeleted)
}

// WatchClaimNodes hands out the owner and the epoch watch apart: a deleted
// owner node fires the owner watch, a reset the epoch watch, and a lost
// claim is refused as WatchClaim refuses it.
func TestIntegrationWatchClaimNodes(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")

	c := cgMust(a.Claim("t", 0)).get(t)
	w := cgMust(a.WatchClaimNodes(c)).get(t)
	e.zkDelete(t, kz.ownerPath("g", "t", 0))
	cgWatchEvent(t, w.Owner, EventNodeDeleted)
	_, err := a.WatchClaimNodes(c)
	cgWantErr(t, err, ErrClaimLost)

	c = cgMust(a.Claim("t", 0)).get(t)
	w = cgMust(a.WatchClaimNodes(c)).get(t)
	cgNoErr(t, e.admin.Consumergroup("g").ResetOffsets())
	cgWatchEvent(t, w.Epoch, EventNodeDataChanged)
	_, err = a.WatchClaimNodes(c)
	cgWantErr(t, err, ErrClaimLost)
}

func assertConflict(t *testing.T, err error, stored int64, version int32) *OffsetConflictError {
	t.Helper()
	var conflict *OffsetConflictError
	if !errors.As(err, &conflict) || !errors.Is(err, ErrOffsetConflict) {
		t.Fatalf("err = %v, want an *OffsetConflictError", err)
	}
	if conflict.Stored != stored || conflict.Version != version {
		t.Fatalf("conflict = %+v, want stored %d version %d", conflict, stored, version)
	}
	if errors.Is(err, ErrClaimLost) {
		t.Fatalf("an offset conflict also claims the claim was lost: %v", err)
	}
	return conflict
}

// Race: a reset finds a partition without an offset node, and before its
// transaction (which then only bumps the epoch) the owner's first commit
// creates the node, fenced by the epoch the reset has not bumped yet. The
// reset returns nil, yet the offset it was asked to delete stays, and the
// next owner resumes there instead of at its initial offset.
func TestIntegrationResetRacesFirstCommit(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")
	operator := e.admin.Consumergroup("g")

	c := cgMust(a.Claim("t", 0)).get(t) // the epoch node exists, no offset node yet
	var commitErr error
	fired := 0
	operator.testHook = func(s hookStep) error {
		if s == stepResetRead && fired == 0 {
			fired++
			_, commitErr = a.CommitOffsetFenced(c, 42, -1)
		}
		return nil
	}
	cgNoErr(t, operator.ResetOffsets())
	operator.testHook = nil
	if fired != 1 {
		t.Fatal("the race was not exercised")
	}
	cgNoErr(t, commitErr) // the epoch had not moved yet: the commit applies
	if off := cgMust(operator.FetchOffset("t", 0)).get(t); off != -1 {
		t.Fatalf("after a reset that returned nil the partition's offset is %d, want none (-1)", off)
	}
}

// ReleaseAfterLoss deletes the owner node a reset left behind (the epoch
// moved, the node is still ours), and nothing that belongs to anyone else.
func TestIntegrationReleaseAfterLoss(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	a := kz.Consumergroup("g").Instance("a")

	c := cgMust(a.Claim("t", 0)).get(t)
	cgNoErr(t, e.admin.Consumergroup("g").ResetOffsets()) // bumps the epoch, the node stays
	cgWantErr(t, a.Release(c), ErrClaimLost)
	e.assertOwner("g", "t", 0, "a", kz)
	cgNoErr(t, a.ReleaseAfterLoss(c))
	if _, _, ok := e.owner("g", "t", 0); ok {
		t.Fatal("the owner node left by the reset survives ReleaseAfterLoss")
	}
	cgNoErr(t, a.ReleaseAfterLoss(c)) // gone already: fine

	// Another instance's node (another session) is left alone.
	other := e.client()
	b := other.Consumergroup("g").Instance("b")
	cb := cgMust(b.Claim("t", 0)).get(t)
	cgNoErr(t, a.ReleaseAfterLoss(c))
	e.assertOwner("g", "t", 0, "b", other)
	cgNoErr(t, b.Release(cb))
}
