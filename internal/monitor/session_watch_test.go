package monitor

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/zkgroup/kafka/kazoo"
)

// The session watch follows the session: connected, disconnected,
// expired and replaced twice over (two expirations), closed; it clears
// the fence gauge at its start and at the close, then ends.
func TestSessionWatchFollowsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, g := newFakeSession(), newFakeGauges()
		m := Start(0, Deps{Session: s, SessionGauges: g, Log: discardLog})
		synctest.Wait()
		s.set(kazoo.SessionDisconnected, 1)
		synctest.Wait()
		s.set(kazoo.SessionConnected, 3)
		synctest.Wait()
		s.set(kazoo.SessionClosed, 3)
		m.AwaitSessionWatch()
		m.Stop()

		if want := []bool{true, false, true, false}; !slices.Equal(g.connected, want) {
			t.Errorf("connected gauge went %v, want %v", g.connected, want)
		}
		if g.expirations != 2 {
			t.Errorf("expirations = %d, want 2 (generation 1 to 3)", g.expirations)
		}
		if g.fenceClears != 2 {
			t.Errorf("fence gauge cleared %d times, want 2 (start, close)", g.fenceClears)
		}
	})
}

// A session already closed when the watch starts ends it at once.
func TestSessionWatchEndsOnClosedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, g := newFakeSession(), newFakeGauges()
		s.set(kazoo.SessionClosed, 1)
		m := Start(0, Deps{Session: s, SessionGauges: g, Log: discardLog})
		m.AwaitSessionWatch()
		if !slices.Equal(g.connected, []bool{false}) {
			t.Errorf("connected gauge went %v, want [false]", g.connected)
		}
	})
}
