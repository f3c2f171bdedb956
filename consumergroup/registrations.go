package consumergroup

import (
	"errors"
	"fmt"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/zkwatch"
	"github.com/zkgroup/kafka/kazoo"
)

// readMembers reads the registration of each listed instance, arming a watch
// on each that is not armed yet, so a changed subscription wakes the loop as
// a join or a leave does.
//
// An instance whose registration is gone by now has left: it is not a
// member (the watch on the instance list fires for its departure). A
// registration that cannot be read (not JSON, or a white_list or black_list
// expression that cannot be used) is reported once, with its path, and its
// instance subscribes to nothing: it takes no partition, so the instances
// whose registrations can be read share every partition of their topics
// between them. Reading it as a subscription to every topic would hand it
// a share of topics it may not consume, and that share would stay unowned.
// bad holds the instances reported so far; it forgets those that are fixed
// or gone, so a registration broken again is reported again.
func (cg *ConsumerGroup) readMembers(ws *zkwatch.Set, instances kazoo.ConsumergroupInstanceList, bad map[string]bool) ([]assign.Member, error) {
	members := make([]assign.Member, 0, len(instances))
	listed := make(map[string]bool, len(instances))
	for _, i := range instances {
		listed[i.ID] = true
		reg, err := zkwatch.Read(ws, "registration/"+i.ID, i.Registration, i.WatchRegistration)
		if errors.Is(err, kazoo.ErrInstanceNotRegistered) {
			continue
		}
		if err != nil && !errors.Is(err, kazoo.ErrMalformed) {
			return nil, fmt.Errorf("registration of %s: %w", i.ID, err)
		}
		var sub assign.Subscription
		if err == nil {
			if sub, err = assign.ParseSubscription(reg); err != nil {
				err = &kazoo.ZnodeError{Op: "parse", Path: cg.registrationPath(i.ID), Err: fmt.Errorf("%w: %w", kazoo.ErrMalformed, err)}
			}
		}
		if err == nil {
			delete(bad, i.ID)
		} else if !bad[i.ID] {
			bad[i.ID] = true
			err = fmt.Errorf("instance %s takes no partition until its registration is fixed: %w", i.ID, err)
			cg.log.Warn("unreadable registration", "instance", i.ID, "err", err)
			cg.report(newPartitionError("", -1, err))
		}
		members = append(members, assign.Member{ID: i.ID, Sub: sub})
	}
	for id := range bad {
		if !listed[id] {
			delete(bad, id)
		}
	}
	return members, nil
}

// registrationPath is the znode of an instance's registration, as kazoo
// names it in errors.
func (cg *ConsumerGroup) registrationPath(id string) string {
	return cg.chroot + "/consumers/" + cg.name + "/ids/" + id
}
