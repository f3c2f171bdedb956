package consumergroup

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/internal/zkwatch"
	"github.com/zkgroup/kafka/kazoo"
)

// resyncInterval bounds how long a missed watch can leave the assignment
// stale: the manage loop recomputes it at least this often.
const resyncInterval = 30 * time.Second

// loopWatches are the manage loop's ZooKeeper watches and the channel
// their firing wakes it on.
type loopWatches struct {
	set  *zkwatch.Set
	wake chan struct{}
}

func newLoopWatches() loopWatches {
	wake := make(chan struct{}, 1)
	return loopWatches{set: zkwatch.New(func() { poke(wake) }), wake: wake}
}

// poke leaves a wake-up token in wake unless one is there already.
func poke(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// view is what the assignment is computed from.
type view struct {
	members    []assign.Member            // registered instances and their subscriptions
	partitions map[string][]PartitionInfo // by topic; missing topics absent
}

// has reports whether the instance id is a member.
func (v view) has(id string) bool {
	return slices.ContainsFunc(v.members, func(m assign.Member) bool { return m.ID == id })
}

// manage is the group's one coordination loop: it watches the registered
// instances and their registrations, hears of changes to the partitions and
// their leaders from the topic source (which watches ZooKeeper or polls
// Kafka), computes this instance's assignment, and starts or stops only the
// partitions that move.
// It also reacts to the session fence's expiry signal (a replaced session).
func (cg *ConsumerGroup) manage(fence *fence.Fence) {
	defer close(cg.done)
	ws := newLoopWatches()
	workers := make(map[topicPartition]*partitionWorker)
	stopping := make(map[topicPartition]*partitionWorker) // stopped, maybe not done
	exited := make(chan *partitionWorker)
	missing := make(map[string]bool)               // topics reported missing
	badRegs := make(map[string]bool)               // instances whose registration was reported unreadable
	cooldown := make(map[topicPartition]time.Time) // partitions not to restart before then
	cooled := make(chan struct{}, 1)               // a cool-down ended
	leftover := make(map[topicPartition]bool)      // an owner node of ours may be left (see sweepOwnerNode)
	resync := time.NewTicker(resyncInterval)
	defer resync.Stop()

	stopAll := func(abandon bool) {
		for tp, w := range workers {
			w.stop(abandon)
			stopping[tp] = w
			delete(workers, tp)
		}
		for tp, w := range stopping {
			if abandon { // partitions still draining: no final commit either
				w.stop(true)
			}
			<-w.done
			delete(stopping, tp)
			if w.mayHoldNode {
				leftover[tp] = true
			}
		}
	}
	defer func() { stopAll(false) }()

	failures := 0
	type viewResult struct {
		v   view
		err error
	}
	for {
		// Reads from ZooKeeper can hang for a long time when it is out of
		// reach; Close must not wait for them. A read abandoned here ends
		// when Close closes the session.
		res := make(chan viewResult, 1)
		go func(ws *zkwatch.Set) {
			v, err := cg.readView(ws, missing, badRegs)
			res <- viewResult{v, err}
		}(ws.set)
		var v view
		var err error
		select {
		case r := <-res:
			v, err = r.v, r.err
		case <-cg.stopper:
			return
		}
		if err != nil {
			failures++
			cg.log.Warn("reading the group's state failed; retrying", "err", err, "failures", failures)
			if failures == 1 || failures%10 == 0 {
				cg.report(newPartitionError("", -1, err))
			}
		} else if !v.has(cg.instance.ID) {
			// Our registration is gone. After a session expiry the fence's
			// signal (handled below) drops every partition without
			// committing and registers again; until it has, nothing here
			// stops through the committing path. Otherwise (someone deleted
			// the node, or registering after an expiry failed) register
			// again now.
			failures = 0
			if s, _ := cg.kazoo.Session(); s.Status == kazoo.SessionConnected && len(fence.Expired()) == 0 {
				if err := cg.reregister(); err != nil {
					cg.report(newPartitionError("", -1, fmt.Errorf("register again: %w", err)))
				}
			}
		} else {
			failures = 0
			cg.reconcile(v, workers, stopping, cooldown, leftover, exited)
		}

		var retry <-chan time.Time
		if err != nil {
			retry = time.After(min(time.Duration(failures)*200*time.Millisecond, 5*time.Second))
		}
		select {
		case <-cg.stopper:
			return
		case <-ws.wake:
		case <-cg.topicSrc.Changed(): // partitions or leaders changed
		case <-cooled:
		case <-cg.sweepWake:
		case <-retry:
		case <-resync.C:
		case <-fence.Expired():
			// Every claim died with the session: stop all partitions without
			// committing or releasing, then register again.
			stopAll(true)
			clear(leftover) // the session's nodes are gone with it
			if err := cg.reregister(); err != nil {
				cg.report(newPartitionError("", -1, fmt.Errorf("register again after session expiry: %w", err)))
			}
			ws = newLoopWatches() // the old watches died with the session
		case w := <-exited:
			// A partition that ended on its own is started again if still
			// assigned here. When its claim ended (lost to another claim, an
			// owner node deleted, the session replaced) it is claimed again
			// at once: the claim loop waits for the partition to be free, so
			// it is owned as soon as it is. After any other failure (a
			// permanent claim error) it waits Claim.RetryCooldown, so a
			// persistent error does not spin.
			if workers[w.tp] == w {
				delete(workers, w.tp)
				stopping[w.tp] = w
				wait := cg.config.Claim.RetryCooldown
				if w.claimEnded() {
					wait = 0
				} else {
					cooldown[w.tp] = time.Now().Add(wait)
				}
				time.AfterFunc(wait, func() {
					select {
					case cooled <- struct{}{}:
					default:
					}
				})
			}
		}
	}
}

// reregister registers the instance again after a session expiry.
//
// A registration whose reply was lost (the connection dropped, a leader
// election) is in doubt: it is tried again, a few times within the connect
// timeout, and finding the node then (ErrInstanceAlreadyRegistered) means
// the first attempt was applied.
func (cg *ConsumerGroup) reregister() error {
	deadline := time.Now().Add(cg.config.Zookeeper.ConnectTimeout)
	for attempt := 1; ; attempt++ {
		err := cg.register()
		if errors.Is(err, kazoo.ErrInstanceAlreadyRegistered) {
			// Held by this session already (maybe an earlier attempt whose
			// reply was lost), or by an older session of ours about to
			// expire: its deletion wakes the loop, which registers again.
			return nil
		}
		if err == nil || !kazoo.IsRetryable(err) || time.Now().After(deadline) {
			return err
		}
		cg.log.Warn("registering failed; trying again", "attempt", attempt, "err", err)
		select {
		case <-cg.stopper:
			return err
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, time.Second)):
		}
	}
}

// readView reads the instances and their registrations, arming watches
// that are not armed yet, and the partitions from the group's topic source.
// The registrations are read again on every call (one read per instance),
// so a join, a leave or a changed subscription all lead to an assignment
// computed from fresh ones.
func (cg *ConsumerGroup) readView(ws *zkwatch.Set, missing, badRegs map[string]bool) (view, error) {
	var v view
	instances, err := zkwatch.Read(ws, "ids", cg.group.Instances, cg.group.WatchInstances)
	if err != nil {
		return v, fmt.Errorf("list instances: %w", err)
	}
	if v.members, err = cg.readMembers(ws, instances, badRegs); err != nil {
		return v, err
	}

	subscribed, err := cg.subscribedTopics(ws)
	if err != nil {
		return v, err
	}
	v.partitions = make(map[string][]PartitionInfo, len(subscribed))
	for _, topic := range subscribed {
		parts, err := cg.topicSrc.Partitions(topic)
		if mt := (*topics.MissingTopicError)(nil); errors.As(err, &mt) {
			// The topic does not exist (yet): report once; the source wakes
			// the loop when it appears.
			if !missing[topic] {
				missing[topic] = true
				cg.reportPartition(topic, -1, fmt.Errorf("topic %q does not exist; waiting for it: %w", topic, mt.Err))
			}
			continue
		}
		if err != nil {
			return v, fmt.Errorf("list partitions of %s: %w", topic, err)
		}
		delete(missing, topic)
		infos := make([]PartitionInfo, len(parts))
		for i, p := range parts {
			infos[i] = PartitionInfo(p)
		}
		v.partitions[topic] = infos
	}
	return v, nil
}

// reconcile stops the workers of partitions no longer assigned here and
// starts workers for newly assigned ones; partitions kept keep flowing.
// Owner nodes that ended workers may have left (leftover) are swept first,
// for partitions no worker of ours wants (see sweepOwnerNode).
func (cg *ConsumerGroup) reconcile(v view, workers, stopping map[topicPartition]*partitionWorker,
	cooldown map[topicPartition]time.Time, leftover map[topicPartition]bool, exited chan<- *partitionWorker) {
	want := make(map[topicPartition]bool)
	assigned, err := assign.Topics(cg.config.Assignment.Strategy, v.members, v.partitions)
	if err != nil { // unreachable: the strategy was validated
		cg.report(err)
		return
	}
	for topic, parts := range assigned[cg.instance.ID] {
		for _, p := range parts {
			want[topicPartition{topic, p.ID}] = true
		}
	}
	var lost, gained []topicPartition
	for tp, w := range workers {
		if !want[tp] {
			w.stop(false)
			stopping[tp] = w
			delete(workers, tp)
			lost = append(lost, tp)
		}
	}
	for tp, w := range stopping {
		select {
		case <-w.done:
			delete(stopping, tp)
			if w.mayHoldNode {
				leftover[tp] = true
			}
		default:
		}
	}
	for tp := range leftover {
		if workers[tp] == nil && stopping[tp] == nil {
			delete(leftover, tp)
			stopping[tp] = cg.sweepOwnerNode(tp) // a worker started for tp waits for it
		}
	}
	now := time.Now()
	for tp, until := range cooldown {
		if !now.Before(until) {
			delete(cooldown, tp)
		}
	}
	for tp := range want {
		if _, cooling := cooldown[tp]; workers[tp] == nil && !cooling {
			workers[tp] = cg.startWorker(tp, stopping[tp], exited)
			delete(stopping, tp) // the new worker waits for it
			gained = append(gained, tp)
		}
	}
	cg.met().owned.Update(int64(len(workers)))
	if len(lost)+len(gained) > 0 {
		cg.met().rebalances.Inc(1)
		cg.timeRebalance(gained, workers)
		cg.log.Info("rebalanced", "instances", len(v.members), "owned", len(workers),
			"lost", sortedTPs(lost), "gained", sortedTPs(gained))
	}
}

func sortedTPs(tps []topicPartition) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = fmt.Sprintf("%s/%d", tp.Topic, tp.Partition)
	}
	slices.Sort(out)
	return out
}

// timeRebalance records, once every partition gained in one rebalance is
// claimed (or its worker ended), how long that took.
func (cg *ConsumerGroup) timeRebalance(gained []topicPartition, workers map[topicPartition]*partitionWorker) {
	start := time.Now()
	var ws []*partitionWorker
	for _, tp := range gained {
		ws = append(ws, workers[tp])
	}
	go func() {
		for _, w := range ws {
			<-w.claimed
		}
		cg.met().rebalanceTime.Update(ms(time.Since(start)))
	}()
}
