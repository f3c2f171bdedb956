package integration

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationStickyJoin: members on the default strategy offer
// "sticky" in their registrations and, all offering it, own exactly what
// consumergroup.AssignTopic(StrategySticky) computes, two of them and
// then three. When the third joins, the partitions that change owner in
// ZooKeeper are exactly those the function moves: the joiner's share,
// plus any the bound moves between the two (docs/assignment.md). Every
// message is consumed, none twice.
func TestIntegrationStickyJoin(t *testing.T) {
	testenv.Integration(t)
	const partitions = int32(12)
	topic := newTopic(t, partitions)
	total := produce(t, topic, 600)
	group := testenv.UniqueName("g")
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)
	logErr := func(err error) { t.Logf("group error: %v", err) }

	a := join(t, group, []string{topic}, nil)
	doneA := readGroup(a, 1, l, 0, logErr)
	b := join(t, group, []string{topic}, nil)
	doneB := readGroup(b, 2, l, 0, logErr)
	two := awaitStickyOwners(t, h, topic, partitions, 2)
	for _, id := range two.ids {
		reg, err := h.cg.Instance(id).Registration()
		if err != nil || !slices.Contains(reg.Assignment, string(consumergroup.StrategySticky)) {
			t.Fatalf("registration of %s = %+v, %v: want it to offer sticky", id, reg, err)
		}
	}

	c := join(t, group, []string{topic}, nil)
	doneC := readGroup(c, 3, l, 0, logErr)
	three := awaitStickyOwners(t, h, topic, partitions, 3)
	joiner := ""
	for _, id := range three.ids {
		if !slices.Contains(two.ids, id) {
			joiner = id
		}
	}

	var toJoiner, between []int32
	for p := range partitions {
		switch before, after := two.owners[p], three.owners[p]; {
		case before == after:
		case after == joiner:
			toJoiner = append(toJoiner, p)
		default:
			between = append(between, p)
		}
	}
	if len(toJoiner) != int(partitions)/3 {
		t.Errorf("the joiner took %v, want %d partitions", toJoiner, partitions/3)
	}
	// Not compared with range: at 12 partitions range moves 4 to 6, and
	// sticky 4 plus, about every other time, one or two between the others.
	rangeMoved := rangeMoves(t, two.ids, three.ids, partitions)
	t.Logf("join: %d partitions to the joiner %v, %d between the others %v; range would move %d",
		len(toJoiner), toJoiner, len(between), between, rangeMoved)

	more := produce(t, topic, 600)
	for p, n := range more {
		total[p] += n
	}
	waitFor(t, 60*time.Second, "every message, by the three", func() bool { return l.missing(topic, total) == 0 })
	for _, cg := range []*consumergroup.ConsumerGroup{a, b, c} {
		closeGroup(t, cg)
	}
	<-doneA
	<-doneB
	<-doneC
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicates", d)
	}
}

// awaitStickyOwners waits until n instances are registered and the owner
// nodes in ZooKeeper are what AssignTopic(StrategySticky) gives them, and
// returns that snapshot.
func awaitStickyOwners(t *testing.T, h *history, topic string, partitions int32, n int) ownerSnapshot {
	t.Helper()
	var infos []consumergroup.PartitionInfo
	for p := range partitions {
		infos = append(infos, consumergroup.PartitionInfo{ID: p, Leader: -1})
	}
	var last ownerSnapshot
	var want map[int32]string
	waitFor(t, 60*time.Second, "the owners to be sticky's", func() bool {
		last = h.snapshot()
		if last.err != nil || len(last.ids) != n {
			return false
		}
		assigned, err := consumergroup.AssignTopic(consumergroup.StrategySticky, topic, last.ids, infos)
		if err != nil {
			t.Fatal(err)
		}
		want = owners(assigned)
		return maps.Equal(last.owners, want)
	})
	return last
}

// rangeMoves is how many partitions RangeByLeader (leaders alike) moves
// from instances before to after.
func rangeMoves(t *testing.T, before, after []string, partitions int32) int {
	t.Helper()
	var infos []consumergroup.PartitionInfo
	for p := range partitions {
		infos = append(infos, consumergroup.PartitionInfo{ID: p, Leader: 1})
	}
	a, err := consumergroup.Assign(consumergroup.StrategyRangeByLeader, before, infos)
	if err != nil {
		t.Fatal(err)
	}
	b, err := consumergroup.Assign(consumergroup.StrategyRangeByLeader, after, infos)
	if err != nil {
		t.Fatal(err)
	}
	x, y := owners(a), owners(b)
	moved := 0
	for p, o := range x {
		if y[p] != o {
			moved++
		}
	}
	return moved
}

// owners maps each partition of an assignment to its instance.
func owners(a map[string][]consumergroup.PartitionInfo) map[int32]string {
	out := make(map[int32]string)
	for id, ps := range a {
		for _, p := range ps {
			out[p.ID] = id
		}
	}
	return out
}
