package kazoo

import (
	"errors"
	"slices"
)

// Consumergroup is a consumer group of Kafka's original ZooKeeper-based
// high-level consumer, stored under /consumers/<Name>:
//
//	/consumers/<group>/ids/<instance>        EPHEMERAL registration JSON
//	/consumers/<group>/owners/<topic>/<p>    EPHEMERAL, the owning instance id
//	/consumers/<group>/offsets/<topic>/<p>   PERSISTENT, decimal next offset
//	/consumers/<group>/epochs/<topic>/<p>    PERSISTENT, its version is the claim epoch
//	/consumers/<group>/static/<instance>     PERSISTENT, a static member's reservation (StaticMember)
//
// Get one from Kazoo.Consumergroup; it reads nothing until a method is
// called. Every method checks Name with ValidateGroupName first.
type Consumergroup struct {
	kz   *Kazoo
	Name string

	// testHook, when set (only by tests of this package, before use), is
	// called at the steps named by hookStep; a non-nil result is treated as
	// if ZooKeeper had returned that error at that point. It lets tests
	// interleave a competing client deterministically.
	testHook func(hookStep) error
}

// hookStep names a point inside a claim or a release (see
// Consumergroup.testHook).
type hookStep int

const (
	// stepClaimExists: a claim's create met NodeExists; the owner node has
	// not been read yet. A competitor may delete it here.
	stepClaimExists hookStep = iota + 1
	// stepClaimSent: a claim's Multi succeeded on the server; its reply has
	// not been used yet. Returning an error here loses the reply.
	stepClaimSent
	// stepReleaseDelete: a release's fenced delete has not been sent yet
	// (the owner node read as ours, or not read: the claim knows its
	// version). A competitor may claim here.
	stepReleaseDelete
	// stepBatchSend: a batch's Multi of claims, releases or commits is about to be
	// sent. Returning an error refuses it without naming a partition.
	stepBatchSend
	// stepResetRead: a reset looked up a partition's offset and epoch nodes;
	// its transaction has not been sent yet. An owner may commit here.
	stepResetRead
	// stepConflictRead: a fenced write found the offset node at another
	// version; the node has not been read yet. A reset may land here.
	stepConflictRead
	// stepRegistered: a registration (a static instance's with its
	// reservation) was just applied; nothing is sent after it. Its session
	// may end here, and another instance take the id.
	stepRegistered
	// stepReservationRead: a static instance's registration looked up its
	// reservation node; its Multi is not sent yet. An instance whose
	// window for it ended may delete the node here.
	stepReservationRead
	// stepReservationDelete: a deletion of a static member's reservation
	// is about to be sent. The member may come back here.
	stepReservationDelete
)

func (cg *Consumergroup) hook(s hookStep) error {
	if cg.testHook == nil {
		return nil
	}
	return cg.testHook(s)
}

// ConsumergroupList is a list of consumer groups, sortable by name.
type ConsumergroupList []*Consumergroup

// ConsumergroupInstanceList is a list of consumer instances, sortable by id.
type ConsumergroupInstanceList []*ConsumergroupInstance

// Consumergroups returns every consumer group that exists under /consumers
// (an empty list if /consumers does not exist), sorted by name.
func (kz *Kazoo) Consumergroups() (ConsumergroupList, error) {
	names, err := kz.children(kz.consumersPath())
	if errors.Is(err, ErrNoNode) {
		return ConsumergroupList{}, nil
	} else if err != nil {
		return nil, err
	}
	slices.Sort(names)
	result := make(ConsumergroupList, 0, len(names))
	for _, name := range names {
		result = append(result, kz.Consumergroup(name))
	}
	return result, nil
}

// Consumergroup returns a handle on the named group. It neither checks that
// the group exists nor validates the name; the handle's methods do the
// latter (ValidateGroupName).
func (kz *Kazoo) Consumergroup(name string) *Consumergroup {
	return &Consumergroup{Name: name, kz: kz}
}

func (cg *Consumergroup) check() error {
	if cg == nil || cg.kz == nil {
		return errors.New("kazoo: Consumergroup handle was not obtained from a Kazoo (use Kazoo.Consumergroup)")
	}
	return ValidateGroupName(cg.Name)
}

// Exists reports whether /consumers/<group> exists.
func (cg *Consumergroup) Exists() (bool, error) {
	if err := cg.check(); err != nil {
		return false, err
	}
	return cg.kz.exists(cg.kz.groupPath(cg.Name))
}

// Create creates /consumers/<group> (and /consumers) if missing. Creating a
// group that exists is not an error.
func (cg *Consumergroup) Create() error {
	if err := cg.check(); err != nil {
		return err
	}
	return cg.kz.mkdirRecursive(cg.kz.groupPath(cg.Name))
}

// Delete removes the group with everything below it: claims, offsets and
// epochs. It returns ErrRunningInstances (bare, as kazoo-go) while any
// instance is registered. Deleting a group that does not exist is not an error.
func (cg *Consumergroup) Delete() error {
	instances, err := cg.Instances()
	if err != nil {
		return err
	}
	if len(instances) > 0 {
		cg.kz.logf("delete %s: %d instances are registered", cg.kz.groupPath(cg.Name), len(instances))
		return ErrRunningInstances
	}
	return cg.kz.deleteRecursive(cg.kz.groupPath(cg.Name))
}

// Instances returns the registered instances, sorted by id (an empty list
// if the group does not exist).
func (cg *Consumergroup) Instances() (ConsumergroupInstanceList, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	ids, err := cg.kz.children(cg.kz.idsPath(cg.Name))
	if errors.Is(err, ErrNoNode) {
		return ConsumergroupInstanceList{}, nil
	} else if err != nil {
		return nil, err
	}
	return cg.instanceList(ids), nil
}

// WatchInstances is Instances plus a watch: the channel receives one Event
// when an instance registers or deregisters (or EventNotWatching when the
// watch is lost) and is then closed. It creates /consumers/<group>/ids if
// missing, so the watch can be set.
func (cg *Consumergroup) WatchInstances() (ConsumergroupInstanceList, <-chan Event, error) {
	if err := cg.check(); err != nil {
		return nil, nil, err
	}
	node := cg.kz.idsPath(cg.Name)
	if err := cg.kz.mkdirRecursive(node); err != nil {
		return nil, nil, err
	}
	ids, _, w, err := cg.kz.conn.ChildrenW(node)
	if err != nil {
		return nil, nil, znodeErr("children", node, err)
	}
	return cg.instanceList(ids), w, nil
}

func (cg *Consumergroup) instanceList(ids []string) ConsumergroupInstanceList {
	slices.Sort(ids)
	result := make(ConsumergroupInstanceList, 0, len(ids))
	for _, id := range ids {
		result = append(result, cg.Instance(id))
	}
	return result
}

// NewInstance returns a handle on a new instance of the group with a
// generated id, "<hostname>:<uuid v4>". Nothing is registered yet.
func (cg *Consumergroup) NewInstance() *ConsumergroupInstance {
	return cg.NewInstanceRealIp("")
}

// NewInstanceRealIp is NewInstance with the id "<hostname>@<realIp>:<uuid
// v4>", for hosts whose name does not tell where they run. An empty realIp
// gives NewInstance's id.
func (cg *Consumergroup) NewInstanceRealIp(realIp string) *ConsumergroupInstance {
	return cg.Instance(generateInstanceID(realIp))
}

// Instance returns a handle on the instance with this id. It neither checks
// that it is registered nor validates the id; the handle's methods do the
// latter (ValidateInstanceID).
func (cg *Consumergroup) Instance(id string) *ConsumergroupInstance {
	return &ConsumergroupInstance{cg: cg, ID: id}
}

// OnlineTopics returns the union of the topics the registered instances
// subscribe to: the keys of their subscriptions, as kazoo-go returns them,
// so a white_list or black_list registration contributes its regular
// expression, not the topics it matches. Instances that deregister while it
// reads are skipped; a
// registration that is not valid JSON is an error naming its path
// (wrapping ErrMalformed).
func (cg *Consumergroup) OnlineTopics() (map[string]struct{}, error) {
	instances, err := cg.Instances()
	if err != nil {
		return nil, err
	}
	topics := make(map[string]struct{})
	for _, cgi := range instances {
		reg, err := cgi.Registration()
		if errors.Is(err, ErrInstanceNotRegistered) {
			continue // deregistered meanwhile
		} else if err != nil {
			return nil, err
		}
		for topic := range reg.Subscription {
			topics[topic] = struct{}{}
		}
	}
	return topics, nil
}

// PartitionOwner returns the instance whose id the partition's owner node
// holds, or nil if nobody claims the partition.
func (cg *Consumergroup) PartitionOwner(topic string, partition int32) (*ConsumergroupInstance, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return nil, err
	}
	data, _, err := cg.kz.get(cg.kz.ownerPath(cg.Name, topic, partition))
	if errors.Is(err, ErrNoNode) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return cg.Instance(string(data)), nil
}

// WatchPartitionOwner is PartitionOwner plus a watch on the owner node: the
// channel receives one Event when the node changes or is deleted (or
// EventNotWatching when the watch is lost) and is then closed. As in
// kazoo-go, when nobody claims the partition it returns nil, nil, nil (no
// watch is set): the partition may be claimed.
func (cg *Consumergroup) WatchPartitionOwner(topic string, partition int32) (*ConsumergroupInstance, <-chan Event, error) {
	if err := cg.check(); err != nil {
		return nil, nil, err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return nil, nil, err
	}
	node := cg.kz.ownerPath(cg.Name, topic, partition)
	data, _, w, err := cg.kz.conn.GetW(node)
	if errors.Is(err, ErrNoNode) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, znodeErr("get", node, err)
	}
	return cg.Instance(string(data)), w, nil
}

// Topics returns the topics the group has claimed partitions of at some
// point (the children of /consumers/<group>/owners), sorted by name.
func (cg *Consumergroup) Topics() (TopicList, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	names, err := cg.kz.children(cg.kz.ownersPath(cg.Name))
	if errors.Is(err, ErrNoNode) {
		return TopicList{}, nil
	} else if err != nil {
		return nil, err
	}
	return cg.kz.topicList(names), nil
}

// Find returns the group of that name in the list, or nil.
func (cgl ConsumergroupList) Find(name string) *Consumergroup {
	for _, cg := range cgl {
		if cg.Name == name {
			return cg
		}
	}
	return nil
}

func (cgl ConsumergroupList) Len() int           { return len(cgl) }
func (cgl ConsumergroupList) Less(i, j int) bool { return cgl[i].Name < cgl[j].Name }
func (cgl ConsumergroupList) Swap(i, j int)      { cgl[i], cgl[j] = cgl[j], cgl[i] }

// Find returns the instance of that id in the list, or nil.
func (cgil ConsumergroupInstanceList) Find(id string) *ConsumergroupInstance {
	for _, cgi := range cgil {
		if cgi.ID == id {
			return cgi
		}
	}
	return nil
}

func (cgil ConsumergroupInstanceList) Len() int           { return len(cgil) }
func (cgil ConsumergroupInstanceList) Less(i, j int) bool { return cgil[i].ID < cgil[j].ID }
func (cgil ConsumergroupInstanceList) Swap(i, j int)      { cgil[i], cgil[j] = cgil[j], cgil[i] }
