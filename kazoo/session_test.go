package kazoo

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestSessionTracker feeds go-zookeeper's session events into the tracker:
// a reconnect with the same session keeps the generation; an expiry stays
// visible until a new session, which bumps the generation; every change
// closes the channel handed out before it.
func TestSessionTracker(t *testing.T) {
	id := int64(0)
	tr := newSessionTracker(time.Now)
	tr.idOf = func() int64 { return id }
	ev := func(s zk.State) { tr.onEvent(zk.Event{Type: zk.EventSession, State: s}) }
	expect := func(status SessionStatus, gen uint64, sid int64) {
		t.Helper()
		s, _ := tr.get()
		if s.Status != status || s.Generation != gen || s.ID != sid {
			t.Fatalf("session = %+v; want %v, generation %d, id %d", s, status, gen, sid)
		}
	}

	expect(SessionConnecting, 0, 0)
	_, changed := tr.get()
	ev(zk.StateConnecting)
	ev(zk.StateConnected)
	id = 11
	ev(zk.StateHasSession)
	expect(SessionConnected, 1, 11)
	select {
	case <-changed:
	default:
		t.Fatal("channel not closed on a change")
	}

	ev(zk.StateDisconnected)
	expect(SessionDisconnected, 1, 11)
	ev(zk.StateConnecting)
	ev(zk.StateHasSession) // same session: reconnected
	expect(SessionConnected, 1, 11)

	ev(zk.StateDisconnected)
	ev(zk.StateExpired)
	expect(SessionExpired, 1, 11)
	ev(zk.StateDisconnected) // go-zookeeper reports this after the expiry
	ev(zk.StateConnecting)
	expect(SessionExpired, 1, 11)
	id = 22
	ev(zk.StateHasSession)
	expect(SessionConnected, 2, 22)

	// Watch events are not session events.
	tr.onEvent(zk.Event{Type: zk.EventNodeDeleted, State: zk.StateDisconnected})
	expect(SessionConnected, 2, 22)

	tr.close()
	expect(SessionClosed, 2, 22)
	ev(zk.StateHasSession)
	expect(SessionClosed, 2, 22)
}
