package kazoo

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// cgEnv is one consumer-group test's world: a fresh chroot that nothing
// else uses (deleted at the end) and an admin connection to it, standing
// for an operator or for the ZooKeeper server acting on its own.
type cgEnv struct {
	t      *testing.T
	chroot string
	admin  *Kazoo
}

func newCGEnv(t *testing.T) *cgEnv {
	t.Helper()
	testenv.Integration(t)
	root := cgConnect(t, []string{testenv.ZKAddr()}, "", 0)
	chroot := "/zkgroup-test/" + testenv.UniqueName("kazoo-cg")
	if err := root.mkdirRecursive(chroot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.deleteRecursive(chroot); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return &cgEnv{t: t, chroot: chroot, admin: cgConnect(t, []string{testenv.ZKAddr()}, chroot, 0)}
}

// cgConnect connects to servers; timeout 0 means the default session
// timeout. The connection is closed when the test ends.
func cgConnect(t *testing.T, servers []string, chroot string, timeout time.Duration) *Kazoo {
	t.Helper()
	conf := NewConfig()
	conf.Chroot = chroot
	if timeout > 0 {
		conf.Timeout = timeout
	}
	kz, err := NewKazoo(servers, conf)
	if err != nil {
		t.Fatalf("connect to %v (is integration/stack.sh up?): %v", servers, err)
	}
	t.Cleanup(func() { kz.Close() })
	return kz
}

// client is a new connection (a new session) to the env's chroot.
func (e *cgEnv) client() *Kazoo {
	return cgConnect(e.t, []string{testenv.ZKAddr()}, e.chroot, 0)
}

// proxiedClient is a new connection to the env's chroot through a TCP proxy
// the test can cut, with the given session timeout.
func (e *cgEnv) proxiedClient(timeout time.Duration) (*Kazoo, *tcpproxy.Proxy) {
	e.t.Helper()
	p, err := tcpproxy.New(testenv.ZKAddr())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = p.Close() })
	return cgConnect(e.t, []string{p.Addr()}, e.chroot, timeout), p
}

// owner reads the owner node of the partition as the admin sees it.
func (e *cgEnv) owner(group, topic string, partition int32) (id string, stat *zk.Stat, ok bool) {
	e.t.Helper()
	data, stat, err := e.admin.conn.Get(e.admin.ownerPath(group, topic, partition))
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil, false
	} else if err != nil {
		e.t.Fatal(err)
	}
	return string(data), stat, true
}

// assertOwner fails unless the partition's owner node holds id and belongs
// to kz's current session.
func (e *cgEnv) assertOwner(group, topic string, partition int32, id string, kz *Kazoo) {
	e.t.Helper()
	got, stat, ok := e.owner(group, topic, partition)
	switch {
	case !ok:
		e.t.Fatalf("%s/%d has no owner node, want %q's", topic, partition, id)
	case got != id || stat.EphemeralOwner != kz.SessionID():
		e.t.Fatalf("%s/%d is owned by %q (session %#x), want %q (session %#x)",
			topic, partition, got, stat.EphemeralOwner, id, kz.SessionID())
	}
}

// epoch reads the partition's epoch (the epoch node's version).
func (e *cgEnv) epoch(group, topic string, partition int32) int32 {
	e.t.Helper()
	_, stat, err := e.admin.conn.Get(e.admin.epochPath(group, topic, partition))
	if err != nil {
		e.t.Fatal(err)
	}
	return stat.Version
}

// expireOwner deletes the owner node as the server does when its session
// expires, while the owning client still believes it owns the partition.
func (e *cgEnv) expireOwner(group, topic string, partition int32) {
	e.t.Helper()
	node := e.admin.ownerPath(group, topic, partition)
	if err := e.admin.conn.Delete(node, -1); err != nil {
		e.t.Fatalf("delete %s: %v", node, err)
	}
}

// cgMust(f()).get(t) is f's value, failing the test on f's error.
func cgMust[T any](v T, err error) cgResult[T] { return cgResult[T]{v, err} }

type cgResult[T any] struct {
	v   T
	err error
}

func (r cgResult[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func cgNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func cgWantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want one wrapping %v", err, want)
	}
}

// cgWantBare fails unless err is want itself, not wrapped: the methods
// kazoo-go had return its sentinel errors bare, so callers can use ==.
func cgWantBare(t *testing.T, err, want error) {
	t.Helper()
	if err != want {
		t.Fatalf("err = %v, want %v itself (==)", err, want)
	}
}

// cgWaitFor polls cond every 20ms until it holds or timeout passes.
func cgWaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cgWatchEvent waits for the one event a watch channel delivers.
func cgWatchEvent(t *testing.T, w <-chan Event, want EventType) Event {
	t.Helper()
	select {
	case ev, ok := <-w:
		if !ok {
			t.Fatal("watch closed without an event")
		}
		if ev.Type != want {
			t.Fatalf("watch event %v on %s, want %v", ev.Type, ev.Path, want)
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatalf("no %v event within 5s", want)
	}
	return Event{}
}

// sessionRecorder records every session state kz reports until stopped.
type sessionRecorder struct {
	mu     sync.Mutex
	seen   []Session
	stop   chan struct{}
	done   chan struct{}
	kz     *Kazoo
	stopMu sync.Once
}

func recordSessions(t *testing.T, kz *Kazoo) *sessionRecorder {
	r := &sessionRecorder{stop: make(chan struct{}), done: make(chan struct{}), kz: kz}
	go func() {
		defer close(r.done)
		for {
			s, changed := kz.Session()
			r.mu.Lock()
			if n := len(r.seen); n == 0 || r.seen[n-1] != s {
				r.seen = append(r.seen, s)
			}
			r.mu.Unlock()
			select {
			case <-changed:
			case <-r.stop:
				return
			}
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *sessionRecorder) close() {
	r.stopMu.Do(func() { close(r.stop) })
	<-r.done
}

func (r *sessionRecorder) states() []Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Session(nil), r.seen...)
}

// waitSession waits until kz reports a session state that satisfies cond.
func waitSession(t *testing.T, kz *Kazoo, timeout time.Duration, what string, cond func(Session) bool) Session {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s, changed := kz.Session()
		if cond(s) {
			return s
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for session %s; last %+v", timeout, what, s)
		}
	}
}

// zkDelete deletes node as an operator would by hand, whatever its version.
func (e *cgEnv) zkDelete(t *testing.T, node string) {
	t.Helper()
	if err := e.admin.conn.Delete(node, -1); err != nil {
		t.Fatalf("delete %s: %v", node, err)
	}
}
