package integration

import (
	"sync"
	"time"
)

// The ledger: what every consumer of a test was handed, for the assertions
// on delivery and for the history recorder (history_test.go).

// delivery is one message handed to one consumer.
type delivery struct {
	consumer  int
	topic     string
	partition int32
	offset    int64
	at        time.Time
}

// ledger records every delivery of every consumer of a test.
type ledger struct {
	mu   sync.Mutex
	all  []delivery
	seen map[messageID]int // times delivered
}

// newLedger returns an empty ledger.
func newLedger() *ledger { return &ledger{seen: make(map[messageID]int)} }

// messageID names one message. A struct, not a formatted string: missing
// looks every produced message up under the ledger's lock, and formatting
// tens of thousands of keys there held the lock long enough, under -race
// on a loaded machine, to stall the handlers recording deliveries until
// their partitions' drains timed out.
type messageID struct {
	topic     string
	partition int32
	offset    int64
}

// add records d; safe for concurrent use by every consumer of a test.
func (l *ledger) add(d delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
	l.seen[messageID{d.topic, d.partition, d.offset}]++
}

// distinct returns how many different messages were delivered.
func (l *ledger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// duplicates returns how many deliveries repeated an earlier one.
func (l *ledger) duplicates() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.seen {
		n += c - 1
	}
	return n
}

// missing counts the produced messages never delivered.
func (l *ledger) missing(topic string, counts map[int32]int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p, c := range counts {
		for o := int64(0); o < c; o++ {
			if l.seen[messageID{topic, p, o}] == 0 {
				n++
			}
		}
	}
	return n
}

// snapshot returns a copy of every delivery recorded so far.
func (l *ledger) snapshot() []delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]delivery(nil), l.all...)
}

// deliveredBy reports whether consumer delivered a message of every
// partition in ps at or after since.
func (l *ledger) deliveredBy(consumer int, since time.Time, ps []int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := make(map[int32]bool)
	for _, d := range l.all {
		if d.consumer == consumer && !d.at.Before(since) {
			seen[d.partition] = true
		}
	}
	for _, p := range ps {
		if !seen[p] {
			return false
		}
	}
	return true
}

// allPartitions returns the partition ids 0..n-1.
func allPartitions(n int32) []int32 {
	ps := make([]int32, n)
	for i := range ps {
		ps[i] = int32(i)
	}
	return ps
}
