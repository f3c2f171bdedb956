package kazoo

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// A release made while the client is cut off and does not know yet that
// its session expired: its request waits in the client and goes out under
// the next session, after the group was deleted and claimed again (the
// epoch node created again, its version reused). The release must leave
// the new owner's node alone, as the reading release did: its read goes
// out under the new session too and finds another's node.
func TestIntegrationReleaseQueuedAcrossAnExpiryAfterTheGroupWasDeleted(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newCGEnv(t)
	// Two addresses of the one server, as an ensemble's client has: the
	// client drops the requests waiting in it only once per round of
	// addresses, so one made between can go out under the next session.
	var proxies []*tcpproxy.Proxy
	var addrs []string
	for range 2 {
		p, err := tcpproxy.New(testenv.ZKAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		proxies, addrs = append(proxies, p), append(addrs, p.Addr())
	}
	kz := cgConnect(t, addrs, e.chroot, timeout)
	cut := func() {
		for _, p := range proxies {
			p.Cut()
		}
	}
	restore := func() {
		for _, p := range proxies {
			p.Restore()
		}
	}
	inst := kz.Consumergroup("g").Instance("zombie")
	observer := e.admin.Consumergroup("g")

	cgNoErr(t, inst.Register([]string{"t"}))
	old := cgMust(inst.Claim("t", 0)).get(t)
	cut()
	cgWaitFor(t, 5*timeout, "the server to expire the session", func() bool {
		registered := cgMust(observer.Instance("zombie").Registered()).get(t)
		owner := cgMust(observer.PartitionOwner("t", 0)).get(t)
		return !registered && owner == nil
	})
	cgNoErr(t, observer.Delete()) // nobody is registered
	taken := cgMust(e.client().Consumergroup("g").Instance("other").Claim("t", 0)).get(t)
	if taken.Epoch != old.Epoch {
		t.Fatalf("new claim %s, old %s: the test needs equal epochs", taken, old)
	}
	if kz.SessionID() != old.SessionID {
		t.Fatalf("the cut-off client already knows its session ended")
	}

	done := make(chan error, 1)
	go func() { done <- inst.Release(old) }()
	time.Sleep(50 * time.Millisecond) // queued in the client
	restore()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the release did not return")
	}
	t.Logf("release: %v; session now %#x, the claim's %#x", err, kz.SessionID(), old.SessionID)
	if id, _, ok := e.owner("g", "t", 0); !ok || id != "other" {
		t.Fatalf("the release of %s (err %v) deleted the node of %s (owner %q, exists %v)", old, err, taken, id, ok)
	}
}
