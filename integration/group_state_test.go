package integration

import (
	"fmt"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// groupState reads a group's registrations, owners and offsets through its
// own ZooKeeper client, for tests to wait on.
type groupState struct {
	kz *kazoo.Kazoo
	cg *kazoo.Consumergroup
}

// newGroupState opens a groupState of group, closed when the test ends.
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
