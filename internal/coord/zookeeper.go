package coord

import "github.com/zkgroup/kafka/kazoo"

// ZooKeeper is what the loop reads and writes in ZooKeeper: the group's
// instances and their registrations, the cluster's topic list (for a white
// list), and this instance's registration. A watch channel receives one
// event (or is closed) when its node changes. Implementations must be safe
// for concurrent use: the registrations of a view are read concurrently.
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

// Kazoo is the ZooKeeper a group reads through kazoo: the cluster's
// topics from kz, the members from group, and register registering this
// instance.
func Kazoo(kz *kazoo.Kazoo, group *kazoo.Consumergroup, register func() error) ZooKeeper {
	return kazooZooKeeper{kz: kz, group: group, register: register}
}

type kazooZooKeeper struct {
	kz       *kazoo.Kazoo
	group    *kazoo.Consumergroup
	register func() error
}

func instanceIDs(l kazoo.ConsumergroupInstanceList) []string {
	ids := make([]string, len(l))
	for i, inst := range l {
		ids[i] = inst.ID
	}
	return ids
}

func topicNames(l kazoo.TopicList) []string {
	names := make([]string, len(l))
	for i, t := range l {
		names[i] = t.Name
	}
	return names
}

func (z kazooZooKeeper) Instances() ([]string, error) {
	l, err := z.group.Instances()
	return instanceIDs(l), err
}

func (z kazooZooKeeper) WatchInstances() ([]string, <-chan kazoo.Event, error) {
	l, ch, err := z.group.WatchInstances()
	return instanceIDs(l), ch, err
}

func (z kazooZooKeeper) Registration(id string) (*kazoo.Registration, error) {
	return z.group.Instance(id).Registration()
}

func (z kazooZooKeeper) WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error) {
	return z.group.Instance(id).WatchRegistration()
}

func (z kazooZooKeeper) Topics() ([]string, error) {
	l, err := z.kz.Topics()
	return topicNames(l), err
}

func (z kazooZooKeeper) WatchTopics() ([]string, <-chan kazoo.Event, error) {
	l, ch, err := z.kz.WatchTopics()
	return topicNames(l), ch, err
}

func (z kazooZooKeeper) Register() error { return z.register() }

func (z kazooZooKeeper) Connected() bool {
	s, _ := z.kz.Session()
	return s.Status == kazoo.SessionConnected
}

// KazooReservations is Reservations read and deleted through kazoo.
func KazooReservations(group *kazoo.Consumergroup) Reservations {
	return kazooReservations{group}
}

type kazooReservations struct{ group *kazoo.Consumergroup }

func (r kazooReservations) Reserved() ([]string, error) { return r.group.StaticMembers() }

func (r kazooReservations) WatchReserved() ([]string, <-chan kazoo.Event, error) {
	return r.group.WatchStaticMembers()
}

func (r kazooReservations) Reservation(id string) (*kazoo.StaticMember, error) {
	return r.group.StaticMember(id)
}

func (r kazooReservations) DeleteReservation(id string, version int32) error {
	return r.group.DeleteStaticMember(id, version)
}
