package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// owners polls ZooKeeper (directly, not through any member's proxy) for
// the owner node of every partition, maps each owner's instance ID to its
// member, and adds an event whenever partitions change hands.
type owners struct {
	group    *kazoo.Consumergroup
	topic    string
	members  []*member
	timeline *timeline
	cut      func() (member int, since time.Duration) // the member cut off now, if any

	mu      sync.Mutex
	current []int // per partition: owning member, 0 for none, -1 for an unknown instance
}

func newOwners(kz *kazoo.Kazoo, group, topic string, partitions int, members []*member, tl *timeline,
	cut func() (int, time.Duration)) *owners {
	return &owners{group: kz.Consumergroup(group), topic: topic, members: members, timeline: tl, cut: cut,
		current: make([]int, partitions)}
}

// snapshot returns the owner of each partition as last seen.
func (o *owners) snapshot() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.current)
}

// run polls every interval until stop is closed.
func (o *owners) run(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		o.poll()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// poll reads every owner node once and reports what changed.
func (o *owners) poll() {
	ids := make(map[string]int, len(o.members))
	for _, m := range o.members {
		if id, _ := m.state.snapshot(); id != "" {
			ids[id] = m.id
		}
	}
	next := o.snapshot()
	for p := range next {
		inst, err := o.group.PartitionOwner(o.topic, int32(p))
		switch {
		case err != nil:
			continue // keep what we knew; the next poll tries again
		case inst == nil:
			next[p] = 0
		default:
			if id, ok := ids[inst.ID]; ok {
				next[p] = id
			} else {
				next[p] = -1
			}
		}
	}
	o.mu.Lock()
	prev := o.current
	o.current = next
	o.mu.Unlock()
	o.report(prev, next)
}

// report adds one event per member whose partitions changed.
func (o *owners) report(prev, next []int) {
	lost := map[int][]int{}
	gained := map[int][]int{}
	for p := range next {
		if prev[p] == next[p] {
			continue
		}
		if prev[p] > 0 {
			lost[prev[p]] = append(lost[prev[p]], p)
		}
		if next[p] > 0 {
			gained[next[p]] = append(gained[next[p]], p)
		}
	}
	cutMember, cutSince := o.cut()
	note := func(m int) string {
		if cutMember == 0 {
			return ""
		}
		if m == cutMember {
			return fmt.Sprintf(" (%.1fs after it was cut off)", cutSince.Seconds())
		}
		return fmt.Sprintf(" (%.1fs after member %d was cut off)", cutSince.Seconds(), cutMember)
	}
	for _, m := range o.members {
		if ps := lost[m.id]; len(ps) > 0 {
			o.timeline.add("member %d no longer owns partitions %s%s", m.id, partitionList(ps), note(m.id))
		}
	}
	for _, m := range o.members {
		if ps := gained[m.id]; len(ps) > 0 {
			o.timeline.add("member %d claimed partitions %s%s", m.id, partitionList(ps), note(m.id))
		}
	}
}
