package kazoo

import (
	"testing"
	"time"
)

// UpdateRegistration of a static instance writes the reservation's copy of
// the registration in the same transaction: once the member leaves, its
// share is computed from the topics it consumes now. It wrote only the
// registration node, and the reservation kept the old subscription.
func TestIntegrationStaticUpdateRegistrationUpdatesTheReservation(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")
	cgNoErr(t, cg.Create())
	a := cg.StaticInstance("s0", 30*time.Second)
	cgNoErr(t, a.Register([]string{"t1"}))
	cgNoErr(t, a.UpdateRegistration([]string{"t2"}))
	reg, err := a.Registration()
	cgNoErr(t, err)
	if reg.Subscription["t2"] != 1 || len(reg.Subscription) != 1 {
		t.Fatalf("registration after UpdateRegistration: %v", reg.Subscription)
	}
	m := cgMust(cg.StaticMember("s0")).get(t)
	if m.Registration.Subscription["t2"] != 1 || len(m.Registration.Subscription) != 1 {
		t.Fatalf("the reservation holds subscription %v, the registration %v", m.Registration.Subscription, reg.Subscription)
	}
	if m.SessionTimeout != kz.SessionTimeout() || m.SessionTimeout <= 0 {
		t.Fatalf("the reservation records session timeout %v, the session's is %v", m.SessionTimeout, kz.SessionTimeout())
	}
	if m.GraceWindow != 30*time.Second {
		t.Fatalf("grace window %v after the update, want 30s", m.GraceWindow)
	}
}
