package main

import (
	"sync"
	"time"
)

// delivery is one message handed to an instance's handler (or returned by
// its poll).
type delivery struct {
	slot      int // the instance: its place in the deploy order, 0..N-1
	partition int32
	offset    int64
	at        time.Time
}

// offsetKey names one message of the topic.
type offsetKey struct {
	partition int32
	offset    int64
}

// ledger records, for one group's run, every acknowledged offset, every
// delivery, and which instance holds which partition right now (as the
// instances' own callbacks say: a claim's ConsumeClaim running, a kgo
// assignment). Every instance of the run writes to it.
type ledger struct {
	mu         sync.Mutex
	acked      []offsetKey
	ackedAt    []time.Time // when each acknowledgement arrived
	deliveries []delivery
	delivered  map[offsetKey]int     // deliveries per offset
	held       map[int32]map[int]int // partition -> slot -> claims running
}

func newLedger() *ledger {
	return &ledger{delivered: make(map[offsetKey]int), held: make(map[int32]map[int]int)}
}

// ack records an offset the broker acknowledged (acks=all).
func (l *ledger) ack(partition int32, offset int64) {
	now := time.Now()
	l.mu.Lock()
	l.acked = append(l.acked, offsetKey{partition, offset})
	l.ackedAt = append(l.ackedAt, now)
	l.mu.Unlock()
}

// deliver records that slot was handed partition's message at offset.
func (l *ledger) deliver(slot int, partition int32, offset int64) {
	now := time.Now()
	l.mu.Lock()
	l.deliveries = append(l.deliveries, delivery{slot, partition, offset, now})
	l.delivered[offsetKey{partition, offset}]++
	l.mu.Unlock()
}

// hold records that slot began (held true) or ended a claim of partition.
func (l *ledger) hold(slot int, partition int32, held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.held[partition]
	if m == nil {
		m = make(map[int]int)
		l.held[partition] = m
	}
	if held {
		m[slot]++
		return
	}
	if m[slot]--; m[slot] <= 0 {
		delete(m, slot)
	}
}

// releaseAll forgets every claim of slot: its client is closed, whatever
// its callbacks said.
func (l *ledger) releaseAll(slot int) {
	l.mu.Lock()
	for _, m := range l.held {
		delete(m, slot)
	}
	l.mu.Unlock()
}

// balancedOwners returns each partition's holder when every one of the
// partitions is held by exactly one instance, only live instances hold
// any, and each holds its even share (partitions/len(live), or one more):
// the assignment a sticky balancer reaches once a group is stable.
func (l *ledger) balancedOwners(partitions int, live []int) (map[int32]int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	isLive := make(map[int]bool, len(live))
	for _, s := range live {
		isLive[s] = true
	}
	owners := make(map[int32]int, partitions)
	count := make(map[int]int, len(live))
	for p := range int32(partitions) {
		m := l.held[p]
		if len(m) != 1 {
			return nil, false
		}
		for s := range m {
			if !isLive[s] {
				return nil, false
			}
			owners[p] = s
			count[s]++
		}
	}
	lo := partitions / len(live)
	hi := lo
	if partitions%len(live) != 0 {
		hi++
	}
	for _, s := range live {
		if count[s] < lo || count[s] > hi {
			return nil, false
		}
	}
	return owners, true
}

// missing counts the acknowledged offsets not delivered yet.
func (l *ledger) missing() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, k := range l.acked {
		if l.delivered[k] == 0 {
			n++
		}
	}
	return n
}

// record is a copy of a ledger's contents.
type record struct {
	deliveries []delivery        // in the order they were recorded
	acked      []offsetKey       // in the order the acknowledgements arrived
	ackedAt    []time.Time       // when each of acked arrived
	delivered  map[offsetKey]int // deliveries per offset
}

// snapshot returns a copy of what the ledger holds.
func (l *ledger) snapshot() record {
	l.mu.Lock()
	defer l.mu.Unlock()
	delivered := make(map[offsetKey]int, len(l.delivered))
	for k, n := range l.delivered {
		delivered[k] = n
	}
	return record{
		deliveries: append([]delivery(nil), l.deliveries...),
		acked:      append([]offsetKey(nil), l.acked...),
		ackedAt:    append([]time.Time(nil), l.ackedAt...),
		delivered:  delivered,
	}
}
