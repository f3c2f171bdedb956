package topics

import (
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

// watchSet turns one-shot ZooKeeper watches into calls of fired. A key is
// re-armed only after its watch fired, so views do not pile up watches on
// the same znode.
type watchSet struct {
	mu    sync.Mutex
	armed map[string]bool
	known map[string]any // the value read with a key's armed watch (see knownRead)
	fired func()
}

func newWatchSet(fired func()) *watchSet {
	return &watchSet{armed: make(map[string]bool), known: make(map[string]any), fired: fired}
}

// lookup returns the value read with key's watch, while that watch is
// armed.
func (ws *watchSet) lookup(key string) (any, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	v, ok := ws.known[key]
	return v, ok
}

func (ws *watchSet) isArmed(key string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.armed[key]
}

// armKnown is arm for a watch read together with value v: until the watch
// fires, lookup returns v.
func (ws *watchSet) armKnown(key string, ch <-chan kazoo.Event, v any) {
	ws.mu.Lock()
	ws.known[key] = v
	ws.mu.Unlock()
	ws.arm(key, ch)
}

// arm waits for ch in the background, then disarms key and calls fired. The
// goroutine ends when the watch fires, or when the ZooKeeper connection
// closes (which closes every watch channel).
func (ws *watchSet) arm(key string, ch <-chan kazoo.Event) {
	ws.mu.Lock()
	ws.armed[key] = true
	ws.mu.Unlock()
	go func() {
		<-ch
		ws.mu.Lock()
		delete(ws.armed, key)
		delete(ws.known, key)
		ws.mu.Unlock()
		ws.fired()
	}()
}

// watchedRead reads through read while key's watch is armed, and otherwise
// through watch, arming the watch it returns (also with a parse error, so
// a fix of the node fires it).
func watchedRead[T any](ws *watchSet, key string, read func() (T, error), watch func() (T, <-chan kazoo.Event, error)) (T, error) {
	if ws.isArmed(key) {
		return read()
	}
	v, ch, err := watch()
	if ch != nil {
		ws.arm(key, ch)
	}
	return v, err
}

// knownRead is watchedRead for a node only its watch can tell a change of:
// while the watch armed with the last successful read has not fired, that
// read's value is returned without asking ZooKeeper again. A change of the
// node fires the watch, which drops the value and wakes the loop, so the
// next view reads it afresh: the value is as current as a read would have
// been when the loop woke. Reading every partition's leader on every
// wake-up cost one round trip per partition (about 0.5 s at 1,024
// partitions, see BenchmarkIntegrationScaleHandoff); this costs none.
func knownRead[T any](ws *watchSet, key string, read func() (T, error), watch func() (T, <-chan kazoo.Event, error)) (T, error) {
	if v, ok := ws.lookup(key); ok {
		return v.(T), nil
	}
	if ws.isArmed(key) { // armed by a read that failed: read without a new watch
		return read()
	}
	v, ch, err := watch()
	switch {
	case ch != nil && err == nil:
		ws.armKnown(key, ch, v)
	case ch != nil:
		ws.arm(key, ch)
	}
	return v, err
}
