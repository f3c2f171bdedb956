package claim

import (
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

// ownerWatches holds, per partition, the owner watch a Claimer has armed
// and not yet seen fire, so that later attempts, later Claim calls and later
// Keep rounds wait on it instead of arming another. A watch is not free:
// the ZooKeeper client keeps a registration for it, and package kazoo a
// goroutine, until the owner node changes, which may be never while another
// instance holds the partition. Reusing the armed watch keeps that cost at
// one watch per partition however long the partition is held elsewhere.
//
// Only channels are stored: no goroutine, no timer. Entries are bounded by
// the number of partitions the Claimer has waited on; a fired entry is
// dropped by whoever notices it first.
type ownerWatches struct {
	mu sync.Mutex
	m  map[partitionKey]<-chan kazoo.Event
}

type partitionKey struct {
	topic     string
	partition int32
}

// armed returns k's watch if one is armed and has not fired, else nil. A
// watch that fired (delivered its event or was closed) fires no more: it
// is dropped, and its event consumed. Package kazoo closes every watch
// channel after its event, so a loop waiting on the same channel still
// wakes.
func (w *ownerWatches) armed(k partitionKey) <-chan kazoo.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.m[k]
	if !ok {
		return nil
	}
	select {
	case <-ch:
		delete(w.m, k)
		return nil
	default:
		return ch
	}
}

// store records ch as k's armed watch. A nil ch (a Registry that could not
// watch) is not stored: it would never fire and never be replaced.
func (w *ownerWatches) store(k partitionKey, ch <-chan kazoo.Event) {
	if ch == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[partitionKey]<-chan kazoo.Event)
	}
	w.m[k] = ch
}

// fired drops ch, which its waiter saw fire, unless k has a newer watch.
func (w *ownerWatches) fired(k partitionKey, ch <-chan kazoo.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.m[k]; ok && cur == ch {
		delete(w.m, k)
	}
}
