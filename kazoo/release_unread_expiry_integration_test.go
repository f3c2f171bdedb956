package kazoo

import (
	"testing"
	"time"
)

// A release of a claim whose session expired, sent once the client has a
// new session, after the group was deleted (Delete allows it: nobody is
// registered any more) and claimed again: the epoch node was created
// again, so the new claims' epoch is the old claim's, and their owner
// nodes are at version 1 too. The release must leave them alone, as the
// reading release did (the node is another session's): ErrClaimLost.
// Two new claims: another instance's (met by Release), and our own id's
// under the new session (met by ReleaseBatch, with a claim of the new
// session, which it releases).
func TestIntegrationReleaseOfAnExpiredSessionAfterTheGroupWasDeleted(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newCGEnv(t)
	kz, proxy := e.proxiedClient(timeout)
	inst := kz.Consumergroup("g").Instance("zombie")
	observer := e.admin.Consumergroup("g")

	cgNoErr(t, inst.Register([]string{"t"}))
	old0 := cgMust(inst.Claim("t", 0)).get(t)
	old1 := cgMust(inst.Claim("t", 1)).get(t)
	s0, _ := kz.Session()

	proxy.Cut()
	cgWaitFor(t, 5*timeout, "the server to expire the session", func() bool {
		registered := cgMust(observer.Instance("zombie").Registered()).get(t)
		p0 := cgMust(observer.PartitionOwner("t", 0)).get(t)
		p1 := cgMust(observer.PartitionOwner("t", 1)).get(t)
		return !registered && p0 == nil && p1 == nil
	})
	cgNoErr(t, observer.Delete()) // nobody is registered

	other := e.client().Consumergroup("g").Instance("other")
	taken := cgMust(other.Claim("t", 0)).get(t)
	proxy.Restore()
	waitSession(t, kz, 10*time.Second, "a new session", func(s Session) bool {
		return s.Status == SessionConnected && s.ID != s0.ID
	})
	again := cgMust(inst.Claim("t", 1)).get(t)
	fresh := cgMust(inst.Claim("t", 2)).get(t)
	if taken.Epoch != old0.Epoch || again.Epoch != old1.Epoch {
		t.Fatalf("new claims %s and %s, old %s and %s: the test needs equal epochs", taken, again, old0, old1)
	}

	err0 := inst.Release(old0)
	errs := inst.ReleaseBatch([]*PartitionClaim{old1, fresh})
	if id, _, ok := e.owner("g", "t", 0); !ok || id != "other" {
		t.Errorf("the release of %s (err %v) deleted the node of %s (owner %q, exists %v)", old0, err0, taken, id, ok)
	}
	e.assertOwner("g", "t", 1, "zombie", kz)
	cgWantErr(t, err0, ErrClaimLost)
	cgWantErr(t, errs[0], ErrClaimLost)
	cgNoErr(t, errs[1])
}
