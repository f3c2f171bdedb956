package kazoo

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A static instance's registration writes its reservation (with its
// registration and grace window), which outlives the registration; a
// second session is refused with ErrFencedInstanceID; a deletion is fenced
// by the version and refused while the member is registered; a grace
// window of 0 deletes the reservation.
func TestIntegrationStaticMemberReservation(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, other := e.client(), e.client()
	cg := kz.Consumergroup("g")
	cgNoErr(t, cg.Create())

	s := cg.StaticInstance("s0", 5*time.Second)
	cgNoErr(t, s.Register([]string{"t"}))
	cgWantBare(t, s.Register([]string{"t"}), ErrInstanceAlreadyRegistered) // ours already
	m := cgMust(cg.StaticMember("s0")).get(t)
	if m.GraceWindow != 5*time.Second || m.Registration.Subscription["t"] != 1 {
		t.Fatalf("reservation = %+v, want a 5s window and the subscription to t", m)
	}
	if ids := cgMust(cg.StaticMembers()).get(t); !slices.Equal(ids, []string{"s0"}) {
		t.Fatalf("StaticMembers = %v", ids)
	}

	cgWantErr(t, other.Consumergroup("g").StaticInstance("s0", 5*time.Second).Register([]string{"t"}), ErrFencedInstanceID)
	if m2 := cgMust(cg.StaticMember("s0")).get(t); m2.Version != m.Version {
		t.Fatalf("a refused instance wrote the reservation: version %d -> %d", m.Version, m2.Version)
	}
	if err := cg.DeleteStaticMember("s0", m.Version); err == nil {
		t.Fatal("deleted the reservation of a registered member")
	} else if !errors.Is(err, ErrNoReservation) {
		t.Fatalf("deleting a registered member's reservation: %v, want ErrNoReservation (it is back)", err)
	}

	cgNoErr(t, s.Deregister())
	cgWantErr(t, cg.DeleteStaticMember("s0", m.Version+1), ErrNoReservation)
	cgNoErr(t, s.Register([]string{"t"})) // back: written again
	m3 := cgMust(cg.StaticMember("s0")).get(t)
	cgNoErr(t, s.Deregister())
	cgWantErr(t, cg.DeleteStaticMember("s0", m.Version), ErrNoReservation) // the version before it came back
	cgNoErr(t, cg.DeleteStaticMember("s0", m3.Version))
	_, err := cg.StaticMember("s0")
	cgWantErr(t, err, ErrNoReservation)

	cgNoErr(t, s.Register([]string{"t"}))
	cgNoErr(t, s.Deregister())
	cgNoErr(t, cg.StaticInstance("s0", 0).Register([]string{"t"})) // no window: no reservation
	if ids := cgMust(cg.StaticMembers()).get(t); len(ids) != 0 {
		t.Fatalf("StaticMembers with a grace window of 0 = %v, want none", ids)
	}
}

// Watching the reservations of a group without static members creates
// nothing; the first reservation fires the watch.
func TestIntegrationWatchStaticMembersCreatesNothing(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("plain")
	cgNoErr(t, cg.Create())
	ids, w, err := cg.WatchStaticMembers()
	if err != nil || len(ids) != 0 || w == nil {
		t.Fatalf("WatchStaticMembers = %v, %v, %v; want none and a watch", ids, w, err)
	}
	if ok := cgMust(kz.exists(kz.staticMembersPath("plain"))).get(t); ok {
		t.Fatal("watching created /consumers/plain/static")
	}
	cgNoErr(t, cg.StaticInstance("s0", time.Second).Register([]string{"t"}))
	cgWatchEvent(t, w, EventNodeCreated)
	if ids := cgMust(cg.StaticMembers()).get(t); !slices.Equal(ids, []string{"s0"}) {
		t.Fatalf("StaticMembers = %v", ids)
	}
}

// A static instance never takes an owner node of its id under another
// session (another live instance with its id): it is claimed by other.
// A plain instance takes such a node as a stale one of its own.
func TestIntegrationStaticClaimLeavesOtherSessionsNode(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, other := e.client(), e.client()
	cgNoErr(t, kz.Consumergroup("g").Create())
	theirs, err := other.Consumergroup("g").StaticInstance("s0", time.Second).Claim("t", 0)
	cgNoErr(t, err)
	_, err = kz.Consumergroup("g").StaticInstance("s0", time.Second).Claim("t", 0)
	cgWantErr(t, err, ErrPartitionClaimedByOther)
	e.assertOwner("g", "t", 0, "s0", other)
	if ep := e.epoch("g", "t", 0); ep != theirs.Epoch {
		t.Fatalf("epoch %d after the refused claim, want %d", ep, theirs.Epoch)
	}
}

// A static member's reservation is written in one transaction with its
// registration. An instance whose session ends right after its
// registration node was created, and whose id another instance takes
// then, must not write its reservation over the new holder's: it would
// give the id the grace window and subscription of an instance that is
// gone (or, with a window of 0, delete the new holder's reservation).
func TestIntegrationStaticReservationWrittenWithTheRegistration(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, other := e.client(), e.client()
	cg := kz.Consumergroup("g")
	cgNoErr(t, cg.Create())
	a := cg.StaticInstance("s0", 3*time.Second)
	b := other.Consumergroup("g").StaticInstance("s0", 7*time.Second)
	cg.testHook = func(s hookStep) error {
		if s != stepRegistered {
			return nil
		}
		cg.testHook = nil
		// a's session ends here, and its ephemeral node with it; b
		// registers the id.
		if err := kz.conn.Delete(a.regPath(), -1); err != nil {
			t.Errorf("delete a's registration: %v", err)
		}
		if err := b.Register([]string{"t"}); err != nil {
			t.Errorf("b registers: %v", err)
		}
		return nil
	}
	_ = a.Register([]string{"t"}) // whatever it answers, its next look finds b's node
	m := cgMust(cg.StaticMember("s0")).get(t)
	if m.GraceWindow != 7*time.Second {
		t.Fatalf("the reservation holds a grace window of %v, want b's 7s: a, whose registration was gone, wrote it after b registered", m.GraceWindow)
	}
}

// A reservation deleted between a static instance's look at it and its
// registration's Multi refuses the Multi (its write of the node finds
// none); the instance looks again and registers with a reservation.
func TestIntegrationStaticRegistrationMeetsItsReservationDeleted(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, other := e.client(), e.client()
	cg, a, m := awayStaticMember(t, kz)
	looks := 0
	cg.testHook = func(s hookStep) error {
		if s == stepReservationRead {
			if looks++; looks == 1 { // the window ends here, for another instance
				cgNoErr(t, other.Consumergroup("g").DeleteStaticMember("s0", m.Version))
			}
		}
		return nil
	}
	cgNoErr(t, a.Register([]string{"t"}))
	cg.testHook = nil
	if looks != 2 {
		t.Errorf("looked at the reservation %d times, want 2 (again after the refused Multi)", looks)
	}
	if m2 := cgMust(cg.StaticMember("s0")).get(t); m2.GraceWindow != 3*time.Second {
		t.Fatalf("reservation after the registration = %+v, want a's, with a 3s window", m2)
	}
}

// A reservation deletion whose member comes back between its look and its
// delete, its reservation deleted meanwhile by another instance whose
// window ended too and written anew at the same version, leaves it: the
// member is registered, so there is no absence to end. Checked apart from
// the delete, the member lost its reservation while registered, and its
// next absence would have had no grace window.
func TestIntegrationReservationDeletionMeetsMemberBackAtTheSameVersion(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, x, y := e.client(), e.client(), e.client()
	cg, m, res := awayStaticMember(t, kz) // its reservation at version 0
	yg := y.Consumergroup("g")
	yg.testHook = func(s hookStep) error {
		if s == stepReservationDelete {
			yg.testHook = nil
			cgNoErr(t, x.Consumergroup("g").DeleteStaticMember("s0", res.Version)) // x's window ends first
			cgNoErr(t, m.Register([]string{"t"}))                                  // s0 is back: version 0 again
		}
		return nil
	}
	cgWantErr(t, yg.DeleteStaticMember("s0", res.Version), ErrNoReservation)
	if _, err := cg.StaticMember("s0"); err != nil {
		t.Fatalf("s0 is registered again and its reservation is gone (%v): its next absence gets no grace window", err)
	}
}

// A member with a grace window of 0 whose old reservation cannot be
// deleted (here a child node under it) registers all the same, leaving the
// node as the group leaves one whose window ended.
func TestIntegrationStaticWindowZeroMeetsUndeletableReservation(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg, _, _ := awayStaticMember(t, kz)
	if _, err := kz.conn.Create(kz.staticMemberPath("g", "s0")+"/x", nil, 0, kz.acl); err != nil {
		t.Fatal(err)
	}
	b := cg.StaticInstance("s0", 0)
	cgNoErr(t, b.Register([]string{"t"}))
	if ok, err := b.Registered(); err != nil || !ok {
		t.Fatalf("Registered = %v, %v after the registration; want true", ok, err)
	}
}

// awayStaticMember creates group g through kz with static member s0
// (grace window 3 s), which registered and left: it returns the group,
// the member and the reservation that stays.
func awayStaticMember(t *testing.T, kz *Kazoo) (*Consumergroup, *ConsumergroupInstance, *StaticMember) {
	t.Helper()
	cg := kz.Consumergroup("g")
	cgNoErr(t, cg.Create())
	m := cg.StaticInstance("s0", 3*time.Second)
	cgNoErr(t, m.Register([]string{"t"}))
	cgNoErr(t, m.Deregister())
	return cg, m, cgMust(cg.StaticMember("s0")).get(t)
}
