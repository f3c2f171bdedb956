package kazoo

import (
	"testing"
	"time"
)

// A client cut off from ZooKeeper (a TCP proxy drops every packet) past its
// session timeout: the server expires the session and deletes its
// registration and claims; the client is told Disconnected at once, and
// Expired plus a new Generation once it can reach the server again; then it
// registers and claims again, and its old claims are fenced off.
func TestIntegrationSessionExpiryThroughProxy(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newCGEnv(t)
	kz, proxy := e.proxiedClient(timeout)
	rec := recordSessions(t, kz)
	cg := kz.Consumergroup("g")
	inst := cg.Instance("zombie")
	observer := e.admin.Consumergroup("g")

	s0, _ := kz.Session()
	if s0.Status != SessionConnected || s0.Generation != 1 || s0.ID == 0 {
		t.Fatalf("initial session %+v", s0)
	}
	cgNoErr(t, inst.Register([]string{"t"}))
	c := cgMust(inst.Claim("t", 0)).get(t)
	v := cgMust(inst.CommitOffsetFenced(c, 10, -1)).get(t)
	e.assertOwner("g", "t", 0, "zombie", kz)

	start := time.Now()
	proxy.Cut()
	waitSession(t, kz, 5*time.Second, "disconnected", func(s Session) bool { return s.Status == SessionDisconnected })
	t.Logf("disconnected after %s", time.Since(start).Round(time.Millisecond))

	// The server expires the session after its timeout: the ephemeral
	// nodes go, as a second client sees.
	cgWaitFor(t, 5*timeout, "the server to delete the expired session's nodes", func() bool {
		registered := cgMust(observer.Instance("zombie").Registered()).get(t)
		owner := cgMust(observer.PartitionOwner("t", 0)).get(t)
		return !registered && owner == nil
	})
	t.Logf("ephemeral nodes gone after %s", time.Since(start).Round(time.Millisecond))
	if s, _ := kz.Session(); s.Status != SessionDisconnected {
		t.Fatalf("cut off client reports %v, want disconnected (it cannot know yet)", s.Status)
	}

	proxy.Restore()
	s := waitSession(t, kz, 10*time.Second, "a new generation", func(s Session) bool {
		return s.Status == SessionConnected && s.Generation == 2
	})
	t.Logf("new session after %s", time.Since(start).Round(time.Millisecond))
	if s.ID == s0.ID || s.ID != kz.SessionID() {
		t.Fatalf("new session %+v, old id %#x, SessionID %#x", s, s0.ID, kz.SessionID())
	}
	rec.close()
	var statuses []SessionStatus
	for _, s := range rec.states() {
		if n := len(statuses); n == 0 || statuses[n-1] != s.Status {
			statuses = append(statuses, s.Status)
		}
	}
	want := []SessionStatus{SessionConnected, SessionDisconnected, SessionExpired, SessionConnected}
	if !equalStatuses(statuses, want) {
		t.Fatalf("session went through %v, want %v", statuses, want)
	}

	// Register and claim again under the new session.
	cgNoErr(t, inst.Register([]string{"t"}))
	c2 := cgMust(inst.Claim("t", 0)).get(t)
	if c2.SessionID != s.ID || c2.Epoch <= c.Epoch {
		t.Fatalf("claim after expiry %s, before %s", c2, c)
	}
	e.assertOwner("g", "t", 0, "zombie", kz)
	// The claim of the expired session fences nothing any more.
	_, err := inst.CommitOffsetFenced(c, 5, v)
	cgWantErr(t, err, ErrClaimLost)
	cgWantErr(t, inst.Release(c), ErrClaimLost)
	v = cgMust(inst.CommitOffsetFenced(c2, 11, v)).get(t)
	if off := cgMust(observer.FetchOffset("t", 0)).get(t); off != 11 {
		t.Fatalf("offset %d, want 11", off)
	}
	cgNoErr(t, inst.Release(c2))
	cgNoErr(t, inst.Deregister())
}

func equalStatuses(a, b []SessionStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
