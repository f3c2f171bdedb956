package coord

import (
	"fmt"
	"slices"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/topics"
)

// reconcile stops the workers of partitions no longer assigned here and
// starts workers for newly assigned ones; partitions kept keep flowing.
// Owner nodes that ended workers may have left (leftover) are swept first,
// for partitions no worker of ours wants.
func (l *Loop) reconcile(v view, ps *partitions) {
	want := make(map[TopicPartition]bool)
	assigned, err := assign.Topics(l.cfg.Strategy, v.assignees(), v.partitions)
	if err != nil { // unreachable: the strategy was validated
		l.d.Report("", -1, err)
		return
	}
	for topic, parts := range assigned[l.cfg.InstanceID] {
		for _, p := range parts {
			want[TopicPartition{topic, p.ID}] = true
		}
	}
	reserved := reservedShares(v, assigned)
	var lost, gained []TopicPartition
	for tp, w := range ps.workers {
		if !want[tp] && !reserved[tp] {
			w.Stop(false)
			ps.stopping[tp] = w
			delete(ps.workers, tp)
			lost = append(lost, tp)
		}
	}
	for tp, w := range ps.stopping {
		select {
		case <-w.Done():
			delete(ps.stopping, tp)
			if w.MayHoldNode() {
				ps.leftover[tp] = true
			}
		default:
		}
	}
	l.sweepLeftovers(ps)
	now := time.Now()
	for tp, until := range ps.cooldown {
		if !now.Before(until) {
			delete(ps.cooldown, tp)
		}
	}
	for tp := range want {
		if _, cooling := ps.cooldown[tp]; ps.workers[tp] == nil && !cooling {
			ps.workers[tp] = l.d.Workers.Start(tp, ps.stopping[tp], ps.exited)
			delete(ps.stopping, tp) // the new worker waits for it
			gained = append(gained, tp)
		}
	}
	l.d.Metrics.Owned(len(ps.workers))
	if len(lost)+len(gained) > 0 {
		l.d.Metrics.Rebalanced()
		// Under sticky the view did not read the gained partitions'
		// leaders (leadersWanted): read them once they are open.
		l.timeRebalance(gained, ps.workers, assign.InEffect(l.cfg.Strategy, v.assignees()) == assign.Sticky)
		l.d.Log.Info("rebalanced", "instances", len(v.members), "reserved", len(v.reserved), "owned", len(ps.workers),
			"lost", sortedTPs(lost), "gained", sortedTPs(gained))
	}
}

// sweepLeftovers starts a sweep of each owner node an ended worker may
// have left, for the partitions no worker of ours runs or stops.
func (l *Loop) sweepLeftovers(ps *partitions) {
	for tp := range ps.leftover {
		if ps.workers[tp] == nil && ps.stopping[tp] == nil {
			delete(ps.leftover, tp)
			ps.stopping[tp] = l.d.Workers.SweepOwnerNode(tp) // a worker started for tp waits for it
		}
	}
}

// reservedShares returns the partitions assigned to reserved members. A
// worker of ours for one of them keeps running: the membership changed
// while the member was away and its share, computed again, took the
// partition from us. Stopping it would leave it unowned for the rest of
// the grace window; it moves to the member once it is back (or to whoever
// the assignment names once the window ends). No worker is started for
// such a partition. See docs/static-members.md.
func reservedShares(v view, assigned map[string]map[string][]assign.Partition) map[TopicPartition]bool {
	out := make(map[TopicPartition]bool)
	for _, m := range v.reserved {
		for topic, parts := range assigned[m.ID] {
			for _, p := range parts {
				out[TopicPartition{topic, p.ID}] = true
			}
		}
	}
	return out
}

func sortedTPs(tps []TopicPartition) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = fmt.Sprintf("%s/%d", tp.Topic, tp.Partition)
	}
	slices.Sort(out)
	return out
}

// gainedLeadersWait bounds how long after the claims of a rebalance the
// leaders of the partitions it gained wait for those partitions to open
// (see timeRebalance): a fetch source that takes longer to open (sarama's
// partition consumer, retrying) must not keep the leader watches off.
const gainedLeadersWait = time.Second

// timeRebalance records, once every partition gained in one rebalance is
// claimed (or its worker ended), how long that took, and, with
// readLeaders, then reads the leaders of the partitions gained
// (readGainedLeaders) once every one of them is open too, or
// gainedLeadersWait after the claims.
func (l *Loop) timeRebalance(gained []TopicPartition, workers map[TopicPartition]Worker, readLeaders bool) {
	start := time.Now()
	var ws []Worker
	for _, tp := range gained {
		ws = append(ws, workers[tp])
	}
	go func() {
		for _, w := range ws {
			<-w.Claimed()
		}
		l.d.Metrics.RebalanceTook(time.Since(start))
		if !readLeaders {
			return
		}
		bound := time.NewTimer(gainedLeadersWait)
		defer bound.Stop()
	wait:
		for _, w := range ws {
			select {
			case <-w.Opened():
			case <-bound.C:
				break wait
			}
		}
		l.readGainedLeaders(gained)
	}()
}

// readGainedLeaders asks the topic source for the leaders of the
// partitions gained, which arms their watches, so the fetches follow their
// moves (the source tells of them: topics.WithLeaderMoves). The view that
// assigned them did not read them (leadersWanted): read there, they would
// delay every claim of a join by a read per partition. Read once the
// partitions are open, they delay neither a claim nor an offset read,
// which go over the same ZooKeeper session, answered in order
// (docs/performance.md, "The handoff: leaders read once the partitions
// are open"); the fetches never needed them (they take leaders from the
// Kafka client). Only these are read, not the whole view again,
// which would cost a read of every registration (docs/coordination.md).
// A failed read is left to the next view, which asks for the owned
// partitions' leaders too.
func (l *Loop) readGainedLeaders(gained []TopicPartition) {
	byTopic := make(map[string]map[int32]bool)
	for _, tp := range gained {
		if byTopic[tp.Topic] == nil {
			byTopic[tp.Topic] = make(map[int32]bool)
		}
		byTopic[tp.Topic][tp.Partition] = true
	}
	for topic, ids := range byTopic {
		if _, err := l.d.Topics.Partitions(topic, topics.Leaders{Of: func(id int32) bool { return ids[id] }}); err != nil {
			l.d.Log.Debug("reading the leaders of the partitions gained failed; the next view reads them", "topic", topic, "err", err)
		}
	}
}
