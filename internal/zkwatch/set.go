package zkwatch

import (
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

// Set turns one-shot ZooKeeper watches into calls of fired. A key is
// re-armed only after its watch fired. Its methods are safe for concurrent
// use.
type Set struct {
	mu    sync.Mutex
	armed map[string]bool
	known map[string]any // the value read with a key's armed watch (see KnownRead)
	fired func()
}

// New returns an empty Set that calls fired (which must not block) each
// time one of its watches fires or its channel closes.
func New(fired func()) *Set {
	return &Set{armed: make(map[string]bool), known: make(map[string]any), fired: fired}
}

// Armed reports whether key's watch is armed and has not fired yet.
func (s *Set) Armed(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed[key]
}

// Arm waits for ch in the background, then disarms key and calls fired.
// The goroutine ends when the watch fires, or when the ZooKeeper
// connection closes (which closes every watch channel).
func (s *Set) Arm(key string, ch <-chan kazoo.Event) {
	s.mu.Lock()
	s.armed[key] = true
	s.mu.Unlock()
	go func() {
		<-ch
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

// armKnown is Arm for a watch read together with value v: until the watch
// fires, lookup returns v.
func (s *Set) armKnown(key string, ch <-chan kazoo.Event, v any) {
	s.mu.Lock()
	s.known[key] = v
	s.mu.Unlock()
	s.Arm(key, ch)
}
