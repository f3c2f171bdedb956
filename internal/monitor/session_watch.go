package monitor

import "github.com/zkgroup/kafka/kazoo"

// Session is the ZooKeeper session the watch follows; *kazoo.Kazoo is
// one. Its state comes from go-zookeeper's event callback.
type Session interface {
	// Session returns the session's state and a channel closed when it
	// changes.
	Session() (kazoo.Session, <-chan struct{})
}

// SessionGauges are the gauges the session watch keeps.
type SessionGauges interface {
	// SetConnected sets zkgroup-session-connected.
	SetConnected(connected bool)
	// AddExpirations counts n sessions that expired and were replaced
	// (zkgroup-session-expirations).
	AddExpirations(n int64)
	// ClearFenced sets zkgroup-session-fenced to 0: a session that starts
	// or closes is not fenced.
	ClearFenced()
}

// watchSession keeps gauges current from the session's state until the
// session is closed.
func watchSession(session Session, gauges SessionGauges) {
	s, changed := session.Session()
	seen := s.Generation
	for {
		gauges.SetConnected(s.Status == kazoo.SessionConnected)
		if s.Generation > seen { // an expired session was replaced
			gauges.AddExpirations(int64(s.Generation - seen))
			seen = s.Generation
		}
		if s.Status == kazoo.SessionClosed {
			gauges.ClearFenced()
			return
		}
		<-changed
		s, changed = session.Session()
	}
}
