package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

// Helpers of the fault-injection tests.

// joinVia is join with an explicit ZooKeeper address (a tcpproxy's, say).
func joinVia(t testing.TB, zkAddr, group string, topics []string, cfg *consumergroup.Config) *consumergroup.ConsumerGroup {
	t.Helper()
	cg, err := consumergroup.JoinConsumerGroup(group, topics, []string{zkAddr}, cfg)
	if err != nil {
		t.Fatalf("join %s through %s: %v", group, zkAddr, err)
	}
	return cg
}

// groupState reads a group's registrations, owners and offsets through its
// own ZooKeeper client, for tests to wait on.
type groupState struct {
	kz *kazoo.Kazoo
	cg *kazoo.Consumergroup
}

func newGroupState(t testing.TB, group string) *groupState {
	t.Helper()
	kz := zkClient(t)
	return &groupState{kz: kz, cg: kz.Consumergroup(group)}
}

// instances returns the registered instance ids (nil on error).
func (g *groupState) instances() []string {
	list, err := g.cg.Instances()
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(list))
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	return ids
}

// owners returns the owner instance id of each claimed partition of topic.
func (g *groupState) owners(topic string, partitions int32) map[int32]string {
	out := make(map[int32]string)
	for p := int32(0); p < partitions; p++ {
		if o, err := g.cg.PartitionOwner(topic, p); err == nil && o != nil {
			out[p] = o.ID
		}
	}
	return out
}

// offsets returns the committed next offset of each partition of topic
// (-1: none), or an error.
func (g *groupState) offsets(topic string, partitions int32) (map[int32]int64, error) {
	out := make(map[int32]int64)
	for p := int32(0); p < partitions; p++ {
		o, err := g.cg.FetchOffset(topic, p)
		if err != nil {
			return nil, fmt.Errorf("offset of %s/%d: %w", topic, p, err)
		}
		out[p] = o
	}
	return out, nil
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

func allPartitions(n int32) []int32 {
	ps := make([]int32, n)
	for i := range ps {
		ps[i] = int32(i)
	}
	return ps
}
