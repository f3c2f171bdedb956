package integration

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// ownerObserver records, from its own ZooKeeper client, when each owner node
// of a topic is deleted (a release).
type ownerObserver struct {
	kz   *kazoo.Kazoo
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	releases map[int32][]time.Time
}

func observeOwners(t testing.TB, group, topic string, partitions int32) *ownerObserver {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &ownerObserver{kz: kz, stop: make(chan struct{}), releases: make(map[int32][]time.Time)}
	cg := kz.Consumergroup(group)
	for p := int32(0); p < partitions; p++ {
		o.wg.Add(1)
		go func(p int32) {
			defer o.wg.Done()
			for {
				owner, ch, err := cg.WatchPartitionOwner(topic, p)
				if err != nil {
					return
				}
				if owner == nil { // free now: wait until someone claims it
					select {
					case <-o.stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					continue
				}
				select {
				case ev, ok := <-ch:
					if ok && ev.Type == kazoo.EventNodeDeleted {
						o.mu.Lock()
						o.releases[p] = append(o.releases[p], time.Now())
						o.mu.Unlock()
					}
					if !ok || ev.Type == kazoo.EventNotWatching {
						return
					}
				case <-o.stop:
					return
				}
			}
		}(p)
	}
	t.Cleanup(func() {
		close(o.stop)
		_ = o.kz.Close()
		o.wg.Wait()
	})
	return o
}

// lastReleaseBefore returns the last release of p before t.
func (o *ownerObserver) lastReleaseBefore(p int32, t time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var best time.Time
	for _, r := range o.releases[p] {
		if r.Before(t) && r.After(best) {
			best = r
		}
	}
	return best, !best.IsZero()
}

// TestIntegrationCleanRebalance: 64 partitions, one consumer, then a second
// joins mid-stream while the first marks every message. It asserts 0
// duplicates, 0 lost, and reports the handoff: for each partition the
// joiner gains, the time from the previous owner's release (its owner node
// deleted, seen by an observer) to the joiner's first message.
func TestIntegrationCleanRebalance(t *testing.T) {
	testenv.Integration(t)
	// The first consumer processes ~1 ms per message, so each partition
	// still has a backlog when the second joins.
	runCleanRebalance(t, messagesMember, time.Millisecond)
}

// runCleanRebalance is TestIntegrationCleanRebalance with members started
// by start; the first one holds each message for work.
func runCleanRebalance(t *testing.T, start memberStarter, work time.Duration) {
	const partitions = 64
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	counts := produce(t, topic, partitions*200)
	var total int
	for _, c := range counts {
		total += int(c)
	}
	offsets := observeOffsets(t, group, topic, partitions)
	owners := observeOwners(t, group, topic, partitions)

	l := newLedger()
	stopA := start(t, testenv.ZKAddr(), group, []string{topic}, testConfig(), 1, l, work)
	defer stopA()
	waitFor(t, 60*time.Second, "a backlog to be processed in part", func() bool { return l.distinct() >= 1000 })

	joined := time.Now()
	stopB := start(t, testenv.ZKAddr(), group, []string{topic}, testConfig(), 2, l, 0)
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
	if r := offsets.Regressions(); len(r) != 0 {
		t.Errorf("committed offsets went backwards: %v", r)
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
	var lat []time.Duration
	for p, f := range first {
		rel, ok := owners.lastReleaseBefore(p, f)
		if !ok || rel.Before(joined) {
			t.Errorf("partition %d: joiner delivered at %v without a release by the first owner after the join", p, f.Sub(joined))
			continue
		}
		lat = append(lat, f.Sub(rel))
	}
	if len(lat) != partitions/2 {
		t.Errorf("joiner gained %d partitions, want %d", len(lat), partitions/2)
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	sets, missed := offsets.Counts()
	t.Logf("clean rebalance, %d partitions, %d messages: duplicates %d, lost %d, offset regressions %d (sets seen %d, unseen %d)",
		partitions, total, l.duplicates(), l.missing(topic, counts), len(offsets.Regressions()), sets, missed)
	t.Logf("handoff release -> joiner's first message over %d partitions: median %v, p90 %v, worst %v",
		len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}
