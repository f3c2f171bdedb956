package kazoo

import (
	"github.com/go-zookeeper/zk"
)

// Event is what a watch channel returned by this package delivers: the
// ZooKeeper client's own event type, as in kazoo-go, so code that names
// zk.Event (or compares ev.Type with zk.EventNodeDeleted) compiles
// unchanged. A watch channel receives one Event and is then closed. When
// the watch is lost (the connection closed, the session expired) the event
// is EventNotWatching and Err says why: read the node again.
type Event = zk.Event

// EventType says what a watch fired for (Event.Type).
type EventType = zk.EventType

// Watch event types, as ZooKeeper defines them: the same constants as the
// ZooKeeper client's.
const (
	EventNodeCreated         = zk.EventNodeCreated
	EventNodeDeleted         = zk.EventNodeDeleted
	EventNodeDataChanged     = zk.EventNodeDataChanged
	EventNodeChildrenChanged = zk.EventNodeChildrenChanged
	// EventNotWatching: the watch was dropped (connection closed or session
	// expired) and will not fire; Err says why. Read the node again.
	EventNotWatching = zk.EventNotWatching
)
