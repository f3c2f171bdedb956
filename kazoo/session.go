package kazoo

import (
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// SessionStatus is the state of the ZooKeeper session as this client knows it.
type SessionStatus int

const (
	// SessionConnecting: no session has been established yet.
	SessionConnecting SessionStatus = iota
	// SessionConnected: the client holds a live session.
	SessionConnected
	// SessionDisconnected: the connection was lost. The session (and every
	// ephemeral node of it) may still be alive on the server until the
	// session timeout passes; the client cannot know which.
	SessionDisconnected
	// SessionExpired: the server declared the session expired. Every
	// ephemeral node of it is gone; the client is establishing a new one.
	SessionExpired
	// SessionClosed: Close was called.
	SessionClosed
)

func (s SessionStatus) String() string {
	switch s {
	case SessionConnecting:
		return "connecting"
	case SessionConnected:
		return "connected"
	case SessionDisconnected:
		return "disconnected"
	case SessionExpired:
		return "expired"
	case SessionClosed:
		return "closed"
	}
	return "unknown"
}

// Session describes the client's ZooKeeper session at one moment.
type Session struct {
	Status SessionStatus
	// ID is the current session id, or the last one while disconnected or
	// expired. 0 before the first session.
	ID int64
	// Generation counts the sessions this client has held: 1 for the first,
	// and one more each time an expired session is replaced. A change of
	// Generation means every ephemeral node (registration, claim) the
	// previous session created is gone.
	Generation uint64
	// Since is when Status last changed.
	Since time.Time
}

// sessionTracker keeps the session state from go-zookeeper's event callback
// (which, unlike its event channel, never drops events) and wakes waiters.
type sessionTracker struct {
	mu      sync.Mutex
	cur     Session
	changed chan struct{}
	idOf    func() int64 // the connection's current session id
	now     func() time.Time
}

func newSessionTracker(now func() time.Time) *sessionTracker {
	return &sessionTracker{
		cur:     Session{Status: SessionConnecting, Since: now()},
		changed: make(chan struct{}),
		now:     now,
	}
}

// get returns the current state and a channel closed at the next change.
func (t *sessionTracker) get() (Session, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur, t.changed
}

func (t *sessionTracker) set(s Session) {
	if s == t.cur {
		return
	}
	if s.Status != t.cur.Status {
		s.Since = t.now()
	}
	t.cur = s
	close(t.changed)
	t.changed = make(chan struct{})
}

// onEvent is the go-zookeeper event callback. It must not block.
func (t *sessionTracker) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.cur
	if s.Status == SessionClosed {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		id := t.idOf()
		if id != s.ID {
			s.Generation++
			s.ID = id
		}
		s.Status = SessionConnected
	case zk.StateExpired:
		s.Status = SessionExpired
	case zk.StateDisconnected, zk.StateConnecting:
		// Expired stays expired until a new session is established.
		if s.Status == SessionConnected {
			s.Status = SessionDisconnected
		}
	case zk.StateAuthFailed:
		if s.Status == SessionConnected {
			s.Status = SessionDisconnected
		}
	}
	t.set(s)
}

func (t *sessionTracker) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.cur
	s.Status = SessionClosed
	t.set(s)
}

// Session returns the session state now and a channel that is closed at the
// next change. Callers learn of every transition without polling:
//
//	for {
//		s, changed := kz.Session()
//		... react to s ...
//		<-changed
//	}
//
// Intermediate states may be coalesced, but a change of Generation (an
// expired session replaced) is never lost.
func (kz *Kazoo) Session() (Session, <-chan struct{}) {
	return kz.session.get()
}

// SessionID returns the id of the current ZooKeeper session (0 if none yet).
func (kz *Kazoo) SessionID() int64 {
	return kz.conn.SessionID()
}
