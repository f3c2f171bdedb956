package integration

import (
	"slices"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationCleanRebalance: 64 partitions, one consumer, then a second
// joins mid-stream while the first marks every message. It asserts 0
// duplicates, 0 lost, and reports the handoff: for each partition the
// joiner gains, the time from the previous owner's release (its owner node
// deleted, seen by an observer) to the joiner's first message.
func TestIntegrationCleanRebalance(t *testing.T) {
	testenv.Integration(t)
	// The first consumer processes ~1 ms per message, so each partition
	// still has a backlog when the second joins.
	runCleanRebalance(t, messagesMember, time.Millisecond, testConfig)
}

// TestIntegrationCleanRebalanceBufferedMessages is the clean rebalance
// with a buffered Messages() (Messages.Buffer 64, about one message per
// partition; more would let the first partition to open put its whole
// backlog in it before the join): the partitions the first member gives
// up have messages waiting in its buffer, which it must not hand out
// after the release.
func TestIntegrationCleanRebalanceBufferedMessages(t *testing.T) {
	testenv.Integration(t)
	runCleanRebalance(t, messagesMember, time.Millisecond, func() *consumergroup.Config {
		cfg := testConfig()
		cfg.Messages.Buffer = 64
		return cfg
	})
}

// runCleanRebalance is TestIntegrationCleanRebalance with members started
// by start, configured by config; the first one holds each message for
// work.
func runCleanRebalance(t *testing.T, start memberStarter, work time.Duration, config func() *consumergroup.Config) {
	const partitions = 64
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	counts := produce(t, topic, partitions*200)
	var total int
	for _, c := range counts {
		total += int(c)
	}
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)
	owners := observeOwners(t, group, topic, partitions)

	stopA := start(t, testenv.ZKAddr(), group, []string{topic}, config(), 1, l, work)
	defer stopA()
	// Every partition delivered from before the join, so that each one the
	// joiner gains is a handoff: a partition opened late on a loaded
	// machine, or waiting behind others in a buffered Messages(), may
	// not have been.
	waitFor(t, 60*time.Second, "a backlog to be processed in part, from every partition", func() bool {
		return l.distinct() >= 1000 && l.deliveredBy(1, time.Time{}, allPartitions(partitions))
	})

	joined := time.Now()
	stopB := start(t, testenv.ZKAddr(), group, []string{topic}, config(), 2, l, 0)
	defer stopB()
	waitFor(t, 120*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
	stopA()
	stopB()

	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages lost", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries on a clean rebalance", d)
	}
	rep := h.assert(expectation{produced: counts})
	if rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v) on a clean rebalance", rep.dups, rep.dupsBy)
	}
	if rep.handoffs != partitions/2 {
		t.Errorf("history: %d handoffs, want %d (the partitions the joiner gained)", rep.handoffs, partitions/2)
	}

	// Handoff latency per partition the joiner gained.
	first := map[int32]time.Time{}
	for _, d := range l.all {
		if d.consumer == 2 && d.at.After(joined) {
			if f, ok := first[d.partition]; !ok || d.at.Before(f) {
				first[d.partition] = d.at
			}
		}
	}
	// The release that handed each partition over is the first one after
	// the join (the history checker above proves no two owners overlapped).
	// A watch that fired late (lagged, below) makes the handoff look
	// faster than it was: those are counted and reported, at 0.
	var lat []time.Duration
	lagged := 0
	for p, f := range first {
		rel, ok := owners.firstReleaseAfter(p, joined)
		if !ok {
			t.Errorf("partition %d: joiner delivered at %v without a release by the first owner after the join", p, f.Sub(joined))
			continue
		}
		if rel.After(f) {
			lagged++
			rel = f
		}
		lat = append(lat, f.Sub(rel))
	}
	if lagged > 0 {
		t.Logf("%d of %d releases were seen by the observer after the joiner's first message (its watch fired late): counted as 0", lagged, len(lat))
	}
	if len(lat) != partitions/2 {
		t.Errorf("joiner gained %d partitions, want %d", len(lat), partitions/2)
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	t.Logf("clean rebalance, %d partitions, %d messages: duplicates %d, lost %d",
		partitions, total, l.duplicates(), l.missing(topic, counts))
	t.Logf("handoff release -> joiner's first message over %d partitions: median %v, p90 %v, worst %v",
		len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}
