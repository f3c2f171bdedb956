package coord

import "github.com/zkgroup/kafka/kazoo"

// ZooKeeper is what the loop reads and writes in ZooKeeper: the group's
// instances and their registrations, the cluster's topic list (for a white
// list), and this instance's registration. A watch channel receives one
// event (or is closed) when its node changes.
type ZooKeeper interface {
	// Instances returns the IDs of the registered instances.
	Instances() ([]string, error)
	// WatchInstances is Instances plus a watch on the list.
	WatchInstances() ([]string, <-chan kazoo.Event, error)
	// Registration returns an instance's registration: an error wrapping
	// kazoo.ErrInstanceNotRegistered when it is gone, kazoo.ErrMalformed
	// when it cannot be parsed.
	Registration(id string) (*kazoo.Registration, error)
	// WatchRegistration is Registration plus a watch on it, returned also
	// with a parse error.
	WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error)
	// Topics returns the names of the cluster's topics.
	Topics() ([]string, error)
	// WatchTopics is Topics plus a watch on the list.
	WatchTopics() ([]string, <-chan kazoo.Event, error)
	// Register registers this instance with its subscription:
	// kazoo.ErrInstanceAlreadyRegistered when its node exists.
	Register() error
	// Connected reports whether the session is connected now.
	Connected() bool
}
