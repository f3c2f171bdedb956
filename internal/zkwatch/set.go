package zkwatch

import (
	"strings"
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

// Set turns one-shot ZooKeeper watches into calls of fired. A key is
// re-armed only after its watch fired. Its methods are safe for concurrent
// use.
type Set struct {
	mu    sync.Mutex
	armed map[string]uint64 // the arming of each armed key (from arms)
	arms  uint64            // armings so far
	known map[string]any    // the value read with a key's armed watch (see KnownRead)
	fired func()

	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// New returns an empty Set that calls fired (which must not block) each
// time one of its watches fires or its channel closes.
func New(fired func()) *Set {
	return &Set{armed: make(map[string]uint64), known: make(map[string]any), fired: fired,
		done: make(chan struct{})}
}

// Close ends every goroutine waiting on one of the Set's watches without
// calling fired, and disarms every key: an Arm after it starts none. Its
// owner calls it when it stops or replaces the Set. A closed connection
// closes its watch channels, but go-zookeeper v1.0.4's loop can block
// before it does (docs/shutdown.md), and the waiting goroutines must not
// outlive their owner.
func (s *Set) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		close(s.done)
		clear(s.armed) // nobody waits on them: a later read arms them anew
		clear(s.known)
	})
}

// closed reports whether Close was called.
func (s *Set) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Armed reports whether key's watch is armed and has not fired yet.
func (s *Set) Armed(key string) bool {
	_, ok := s.arming(key)
	return ok
}

// arming returns which arming of key's watch is armed, if any.
func (s *Set) arming(key string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.armed[key]
	return n, ok
}

// Arm waits for ch in the background, then disarms key and calls fired.
// The goroutine ends when the watch fires, when the ZooKeeper connection
// closes (which closes every watch channel), or with Close.
func (s *Set) Arm(key string, ch <-chan kazoo.Event) {
	s.mu.Lock()
	if s.closed() { // nobody waits on it: a later read must arm it anew
		delete(s.known, key)
		s.mu.Unlock()
		return
	}
	s.arms++
	s.armed[key] = s.arms
	s.mu.Unlock()
	go func() {
		select {
		case <-ch:
		case <-s.done:
			return
		}
		s.mu.Lock()
		delete(s.armed, key)
		delete(s.known, key)
		s.mu.Unlock()
		s.fired()
	}()
}

// lookup returns the value read with key's watch, while that watch is
// armed.
func (s *Set) lookup(key string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.known[key]
	return v, ok
}

// knowIfArmed keeps v, read while arming n of key's watch was armed, as
// key's known value if that arming is still armed: a value read under a
// watch that has fired since, or under an earlier watch, is never kept.
func (s *Set) knowIfArmed(key string, n uint64, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed[key] == n {
		s.known[key] = v
	}
}

// Forget drops every value KnownRead knows, keeping the watches: the next
// KnownRead of each key reads ZooKeeper again (without a new watch while
// its watch is armed) and knows the fresh value. A loop's periodic resync
// calls it, so a watch that never fires leaves a value stale no longer
// than the resync's interval.
func (s *Set) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.known)
}

// ForgetPrefix is Forget for the keys that begin with prefix alone.
func (s *Set) ForgetPrefix(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.known {
		if strings.HasPrefix(key, prefix) {
			delete(s.known, key)
		}
	}
}

// armKnown is Arm for a watch read together with value v: until the watch
// fires, lookup returns v.
func (s *Set) armKnown(key string, ch <-chan kazoo.Event, v any) {
	s.mu.Lock()
	s.known[key] = v
	s.mu.Unlock()
	s.Arm(key, ch)
}
