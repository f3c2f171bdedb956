package kazoo

import (
	"github.com/go-zookeeper/zk"
)

// EventType says what a watch fired for.
type EventType int

// Watch event types, as ZooKeeper defines them.
const (
	EventNodeCreated         EventType = EventType(zk.EventNodeCreated)
	EventNodeDeleted         EventType = EventType(zk.EventNodeDeleted)
	EventNodeDataChanged     EventType = EventType(zk.EventNodeDataChanged)
	EventNodeChildrenChanged EventType = EventType(zk.EventNodeChildrenChanged)
	// EventNotWatching: the watch was dropped (connection closed or session
	// expired) and will not fire; Err says why. Read the node again.
	EventNotWatching EventType = EventType(zk.EventNotWatching)
)

func (t EventType) String() string { return zk.EventType(t).String() }

// Event is what a watch channel returned by this package delivers, once.
type Event struct {
	Type EventType
	Path string // full path, chroot included
	Err  error  // set with EventNotWatching
}

// watchChan converts a one-shot go-zookeeper watch channel into ours. The
// returned channel receives at most one Event and is then closed.
func watchChan(in <-chan zk.Event) <-chan Event {
	out := make(chan Event, 1)
	go func() {
		defer close(out)
		ev, ok := <-in
		if !ok {
			return
		}
		out <- Event{Type: EventType(ev.Type), Path: ev.Path, Err: ev.Err}
	}()
	return out
}
