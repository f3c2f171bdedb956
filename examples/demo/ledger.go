package main

import (
	"sync"
	"time"
)

// delivery is one message handed to a member by Messages().
type delivery struct {
	offset int64
	member int
	at     time.Duration // since the demo's start
}

// ledger records what the producer wrote and what each member was given,
// per partition. Its methods are safe for concurrent use.
type ledger struct {
	start   time.Time
	members int

	mu         sync.Mutex
	produced   []int64      // per partition: offset of the next message to be written
	deliveries [][]delivery // per partition, in the order they happened
	next       []int64      // per partition: highest offset delivered + 1
	counts     []int64      // per member (index 1..members): deliveries so far
}

func newLedger(start time.Time, partitions, members int) *ledger {
	return &ledger{
		start:      start,
		members:    members,
		produced:   make([]int64, partitions),
		deliveries: make([][]delivery, partitions),
		next:       make([]int64, partitions),
		counts:     make([]int64, members+1),
	}
}

// since is the demo clock: time since the start.
func (l *ledger) since() time.Duration { return time.Since(l.start) }

// wrote records that the producer's message landed at offset of partition.
func (l *ledger) wrote(partition int32, offset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.produced[partition] = max(l.produced[partition], offset+1)
}

// delivered records that member was given the message at offset of
// partition.
func (l *ledger) delivered(member int, partition int32, offset int64) {
	at := l.since()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deliveries[partition] = append(l.deliveries[partition], delivery{offset: offset, member: member, at: at})
	l.next[partition] = max(l.next[partition], offset+1)
	l.counts[member]++
}

// gauges is what the live view shows, read at one instant.
type gauges struct {
	produced  int64   // messages written
	delivered []int64 // per member: deliveries so far
	lag       []int64 // per partition: written but not yet delivered
}

func (l *ledger) gauges() gauges {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := gauges{delivered: append([]int64(nil), l.counts...), lag: make([]int64, len(l.produced))}
	for p, n := range l.produced {
		g.produced += n
		g.lag[p] = max(n-l.next[p], 0) // a delivery may be recorded before its write is
	}
	return g
}

// caughtUp reports whether every message written was delivered at least
// once.
func (l *ledger) caughtUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, n := range l.produced {
		if l.next[p] < n || (n > 0 && !l.complete(p)) {
			return false
		}
	}
	return true
}

// complete reports whether every offset below produced[p] was delivered.
// The caller holds mu.
func (l *ledger) complete(p int) bool {
	seen := make([]bool, l.produced[p])
	missing := len(seen)
	for _, d := range l.deliveries[p] {
		if d.offset < int64(len(seen)) && !seen[d.offset] {
			seen[d.offset] = true
			missing--
		}
	}
	return missing == 0
}

// snapshot copies the records, for the summary.
func (l *ledger) snapshot() (produced []int64, deliveries [][]delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	produced = append([]int64(nil), l.produced...)
	deliveries = make([][]delivery, len(l.deliveries))
	for p, ds := range l.deliveries {
		deliveries[p] = append([]delivery(nil), ds...)
	}
	return produced, deliveries
}
