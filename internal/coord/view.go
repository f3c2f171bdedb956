package coord

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/internal/zkwatch"
	"github.com/zkgroup/kafka/kazoo"
)

// view is what the assignment is computed from.
type view struct {
	members    []assign.Member               // registered instances and their subscriptions
	reserved   []assign.Member               // static members absent but within their grace window
	reservedTo time.Time                     // the earliest end of a grace window; zero: none
	partitions map[string][]assign.Partition // by topic; missing topics absent
}

// assignees are the members the partitions are divided between: the
// registered ones and the reserved ones, whose share nobody claims.
func (v view) assignees() []assign.Member {
	return append(slices.Clip(v.members), v.reserved...)
}

// has reports whether the instance id is a registered member.
func (v view) has(id string) bool {
	return slices.ContainsFunc(v.members, func(m assign.Member) bool { return m.ID == id })
}

// readView reads the instances and their registrations, arming watches
// that are not armed yet, and the partitions from the group's topic source.
// A registration is read again only after its watch fired (readMembers),
// so a join, a leave or a changed subscription all lead to an assignment
// computed from fresh ones, and a join costs each member one read of the
// joiner's registration, not one of every member's. absent times the
// absences of static members (readReservations). The members are read
// before the partitions, so a partition's leader is read only when the
// assignment needs it (see leadersWanted); owned holds the partitions this
// instance consumes, whose leaders are read all the same.
func (l *Loop) readView(ws loopWatches, missing, badRegs map[string]bool, absent map[string]absence, owned map[TopicPartition]bool) (view, error) {
	var v view
	zk := l.d.ZooKeeper
	instances, err := zkwatch.Read(ws.set, "ids", zk.Instances, zk.WatchInstances)
	if err != nil {
		return v, fmt.Errorf("list instances: %w", err)
	}
	if v.members, err = l.readMembers(ws, instances, badRegs); err != nil {
		return v, err
	}
	live := make(map[string]bool, len(v.members)) // a registration gone since the listing is absent
	for _, m := range v.members {
		live[m.ID] = true
	}
	if v.reserved, v.reservedTo, err = l.readReservations(ws, live, absent, time.Now()); err != nil {
		return v, err
	}

	subscribed, err := l.subscribedTopics(ws)
	if err != nil {
		return v, err
	}
	v.partitions = make(map[string][]assign.Partition, len(subscribed))
	for _, topic := range subscribed {
		parts, err := l.d.Topics.Partitions(topic, l.leadersWanted(v, topic, owned))
		if mt := (*topics.MissingTopicError)(nil); errors.As(err, &mt) {
			// The topic does not exist (yet): report once; the source wakes
			// the loop when it appears.
			if !missing[topic] {
				missing[topic] = true
				err := fmt.Errorf("topic %q does not exist; waiting for it: %w", topic, mt.Err)
				l.d.Log.Warn("partition error", "topic", topic, "partition", -1, "err", err)
				l.d.Report(topic, -1, err)
			}
			continue
		}
		if err != nil {
			return v, fmt.Errorf("list partitions of %s: %w", topic, err)
		}
		delete(missing, topic)
		infos := make([]assign.Partition, len(parts))
		for i, p := range parts {
			infos[i] = assign.Partition(p)
		}
		v.partitions[topic] = infos
	}
	return v, nil
}

// leadersWanted is which of topic's leaders the view v needs: every one
// when the strategy in effect orders partitions by leader (range-by-leader,
// and sticky when a member does not offer it), otherwise only those of the
// partitions owned here, whose leader moves the fetches follow. An
// all-sticky group's view then reads no leader of a partition it does not
// consume: at 1,024 partitions that was most of a joiner's first view
// (docs/performance.md, "Scale").
func (l *Loop) leadersWanted(v view, topic string, owned map[TopicPartition]bool) topics.Leaders {
	if assign.InEffect(l.cfg.Strategy, v.assignees()) == assign.RangeByLeader {
		return topics.Leaders{All: true}
	}
	return topics.Leaders{Of: func(id int32) bool { return owned[TopicPartition{topic, id}] }}
}

// readMembers reads the registration of each listed instance, arming a watch
// on each that is not armed yet, so a changed subscription wakes the loop as
// a join or a leave does. A registration read with its watch is not read
// again until that watch fires (zkwatch.KnownRead, as leaders are): the
// registrations of a group of K members cost K reads per view instead of
// K per member per view (docs/coordination.md, "Round trips per rebalance").
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
//
// The registrations not known are read concurrently (up to maxConcurrentRegistrationReads at once):
// ZooKeeper pipelines them on the one session, so a joiner's first view of
// 64 instances costs a few round trips, not 64 in a row.
func (l *Loop) readMembers(ws loopWatches, instances []string, bad map[string]bool) ([]assign.Member, error) {
	zk := l.d.ZooKeeper
	regs := make([]*kazoo.Registration, len(instances))
	errs := make([]error, len(instances))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentRegistrationReads)
	for i, id := range instances {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			regs[i], errs[i] = zkwatch.KnownRead(ws.set, "registration/"+id,
				func() (*kazoo.Registration, error) { return zk.Registration(id) },
				func() (*kazoo.Registration, <-chan kazoo.Event, error) { return zk.WatchRegistration(id) })
		}()
	}
	wg.Wait()

	members := make([]assign.Member, 0, len(instances))
	listed := make(map[string]bool, len(instances))
	for i, id := range instances {
		listed[id] = true
		reg, err := regs[i], errs[i]
		if errors.Is(err, kazoo.ErrInstanceNotRegistered) {
			continue
		}
		if err != nil && !errors.Is(err, kazoo.ErrMalformed) {
			return nil, fmt.Errorf("registration of %s: %w", id, err)
		}
		var sub assign.Subscription
		if err == nil {
			if sub, err = assign.ParseSubscription(reg); err != nil {
				err = &kazoo.ZnodeError{Op: "parse", Path: l.d.RegistrationPath(id), Err: fmt.Errorf("%w: %w", kazoo.ErrMalformed, err)}
			}
		}
		if err == nil {
			delete(bad, id)
		} else if !bad[id] {
			bad[id] = true
			err = fmt.Errorf("instance %s takes no partition until its registration is fixed: %w", id, err)
			l.d.Log.Warn("unreadable registration", "instance", id, "err", err)
			l.d.Report("", -1, err)
		}
		members = append(members, assign.Member{ID: id, Sub: sub, Offers: assign.OfferedBy(reg)})
	}
	for id := range bad {
		if !listed[id] {
			delete(bad, id)
		}
	}
	return members, nil
}

// maxConcurrentRegistrationReads bounds the registration reads of one view
// in flight at once.
const maxConcurrentRegistrationReads = 64

// subscribedTopics returns the topics this instance consumes: the topic
// list, or the existing topics its white list covers, sorted. For a white
// list it reads the topic list through a watch (armed once), so a topic
// created later wakes the loop.
func (l *Loop) subscribedTopics(ws loopWatches) ([]string, error) {
	if l.cfg.WhiteList == nil {
		return l.cfg.Topics, nil
	}
	all, err := zkwatch.Read(ws.set, "topics", l.d.ZooKeeper.Topics, l.d.ZooKeeper.WatchTopics)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	var topics []string
	for _, t := range all {
		if l.cfg.WhiteList.Includes(t) {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	return topics, nil
}
