package integration

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Consumer ids in the ledger of the zombie test.
const (
	zombieA = 1 // cut off from ZooKeeper
	zombieB = 2 // joins during the cut
)

// TestIntegrationZombie is the zombie scenario (fenced commits, conflicts
// resolved, session loss stopping delivery first): consumer A reaches
// ZooKeeper through a proxy, with a short session timeout, and owns every partition of a topic that is produced to
// throughout. The proxy cuts A off for longer than its session timeout
// (Kafka stays reachable, so A could keep fetching); B joins meanwhile and
// takes A's partitions once A's session expires. Then A is reconnected: it
// must notice that its session was replaced, drop everything without
// committing, register again and share the partitions with B.
//
// It asserts what the design promises:
//   - no committed offset ever goes backwards (watched from a third client);
//   - no message is lost;
//   - A stops delivering within the self-fence window after the cut
//     (Session.SelfFenceFraction * Zookeeper.Timeout + one probe interval +
//     scheduling slack), and never delivers a message of a partition while B
//     delivers that partition (no time overlap);
//   - the only duplicates are messages A delivered but had not committed when
//     it was cut off, and B resumes exactly at A's last commit.
func TestIntegrationZombie(t *testing.T) {
	testenv.Integration(t)
	runZombie(t, testenv.ZKAddr(), testConfig, messagesMember)
}

// runZombie is the zombie scenario with members started by start, reaching
// ZooKeeper at zkAddr (A through a proxy in front of it) and configured by
// newConfig; the observers use the stack's ZK_ADDR.
func runZombie(t *testing.T, zkAddr string, newConfig func() *consumergroup.Config, start memberStarter) {
	const (
		partitions     = int32(8)
		sessionTimeout = 3 * time.Second
		// slack covers scheduling: the gate closes at a fence tick, a
		// sender already in its select may still hand over one message, and
		// the ledger stamps the time after the application received it.
		slack = 300 * time.Millisecond
	)
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	topics := []string{topic}
	all := allPartitions(partitions)

	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l) // before anyone commits
	state := newGroupState(t, group)

	proxy, err := tcpproxy.New(zkAddr)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	// About 320 messages a second, 40 per partition, for as long as needed.
	prod := startProducer(t, topic, 8, 25*time.Millisecond, 20000)

	cfgA := newConfig()
	cfgA.Zookeeper.Timeout = sessionTimeout
	fenceAfter := time.Duration(float64(sessionTimeout) * cfgA.Session.SelfFenceFraction)
	probeInterval := sessionTimeout / 10
	fenceBound := fenceAfter + probeInterval + slack

	stopA := start(t, proxy.Addr(), group, topics, cfgA, zombieA, l, 0)
	stopB := func() {}
	t.Cleanup(func() { // on an early failure: stop everything before the checks of goleak
		proxy.Restore()
		stopA()
		stopB()
	})

	// 1. A owns every partition, has consumed a while and committed each.
	waitFor(t, 30*time.Second, "A to deliver 400 messages, some of every partition", func() bool {
		return l.distinct() >= 400 && l.deliveredBy(zombieA, time.Time{}, all)
	})
	waitFor(t, 30*time.Second, "A to commit every partition", func() bool {
		offs, err := state.offsets(topic, partitions)
		if err != nil {
			return false
		}
		for _, o := range offs {
			if o < 0 {
				return false
			}
		}
		return true
	})
	ids := state.instances()
	if len(ids) != 1 {
		t.Fatalf("registered instances before the cut: %v, want only A", ids)
	}
	aID := ids[0]
	if owners := state.owners(topic, partitions); len(owners) != int(partitions) {
		t.Fatalf("owners before the cut: %v, want A on every partition", owners)
	}

	// 2. Cut A off from ZooKeeper; B joins directly.
	cutAt := time.Now()
	h.fault("A cut off from ZooKeeper", zombieA)
	proxy.Cut()
	t.Logf("cut A (%s) off from ZooKeeper after %d deliveries", aID, len(l.snapshot()))
	stopB = start(t, zkAddr, group, topics, newConfig(), zombieB, l, 0)

	// The committed offsets are frozen now: A cannot write any more, and B
	// cannot claim before A's session expires (at least a third of the
	// session timeout away). A partition counts only if A still owns it
	// after its offset was read.
	time.Sleep(500 * time.Millisecond)
	frozen := frozenOffsets(state, topic, partitions, aID)

	waitFor(t, 30*time.Second, "A's session to expire (its registration to vanish)", func() bool {
		ids := state.instances()
		return ids != nil && !slices.Contains(ids, aID)
	})
	expiredAt := time.Now()
	waitFor(t, 30*time.Second, "B to deliver every partition", func() bool {
		return l.deliveredBy(zombieB, cutAt, all)
	})
	bOwnsAllAt := time.Now()

	// 3. Reconnect A: it must find its session replaced, drop everything,
	// register again and take back its share once B lets go.
	restoreAt := time.Now()
	proxy.Restore()
	h.faultEnd()
	waitFor(t, 30*time.Second, "A to register again", func() bool {
		return slices.Contains(state.instances(), aID)
	})
	reregisteredAt := time.Now()
	var aShare []int32
	waitFor(t, 45*time.Second, "A to own and deliver its share again", func() bool {
		owners := state.owners(topic, partitions)
		if len(owners) != int(partitions) {
			return false
		}
		aShare = aShare[:0]
		for p, id := range owners {
			if id == aID {
				aShare = append(aShare, p)
			}
		}
		return len(aShare) > 0 && len(aShare) < int(partitions) && l.deliveredBy(zombieA, restoreAt, aShare)
	})
	sort.Slice(aShare, func(i, j int) bool { return aShare[i] < aShare[j] })
	sharedAt := time.Now()

	// 4. Both consume for a while; then stop producing and let them finish.
	time.Sleep(time.Second)
	counts, err := prod.stop()
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	var produced int64
	for _, c := range counts {
		produced += c
	}
	waitFor(t, 30*time.Second, "every produced message to be delivered", func() bool {
		return l.missing(topic, counts) == 0
	})
	var wg sync.WaitGroup
	for _, stop := range []func(){stopA, stopB} {
		wg.Add(1)
		go func() { defer wg.Done(); stop() }()
	}
	wg.Wait()

	// The figures.
	f := analyzeZombie(l.snapshot(), cutAt, frozen)
	rep := h.checkWith(expectation{produced: counts})
	rep.log(t)
	missing := l.missing(topic, counts)

	t.Logf("timeline: A expired after %v; B delivered every partition %v after the cut; cut lasted %v; "+
		"A registered again %v after the restore and owned+delivered %v (partitions %v) %v after it",
		expiredAt.Sub(cutAt).Round(time.Millisecond), bOwnsAllAt.Sub(cutAt).Round(time.Millisecond),
		restoreAt.Sub(cutAt).Round(time.Millisecond), reregisteredAt.Sub(restoreAt).Round(time.Millisecond),
		len(aShare), aShare, sharedAt.Sub(restoreAt).Round(time.Millisecond))
	t.Logf("produced %d, delivered %d distinct (A %d, B %d deliveries), missing %d",
		produced, l.distinct(), f.perConsumer[zombieA], f.perConsumer[zombieB], missing)
	t.Logf("A after the cut: %d deliveries, the last %v after the cut (bound %v = %v fence + %v probe + %v slack); "+
		"A deliveries between the cut and the restore: %d",
		f.aAfterCut, f.aLongest.Round(time.Millisecond), fenceBound, fenceAfter, probeInterval, slack, f.aDuringCut(cutAt, restoreAt))
	t.Logf("handoff A->B: shortest gap between A's last and B's first delivery %v, longest %v; true overlap: %d A deliveries inside B's delivery interval",
		f.minGap.Round(time.Millisecond), f.maxGap.Round(time.Millisecond), f.overlap)
	t.Logf("duplicates: %d of messages A delivered but had not committed (allowed), %d others", f.dupAllowed, len(f.dupOther))
	for _, p := range all {
		pf := f.parts[p]
		t.Logf("  partition %d: committed at cut %s, B started at %d; A after cut %d (last +%v); B %v..+%v; overlap %d",
			p, frozenOr(frozen, p), pf.bStart, pf.aAfterCut, pf.aLast.Round(time.Millisecond),
			pf.bFirst.Sub(cutAt).Round(time.Millisecond), pf.bLast.Sub(cutAt).Round(time.Millisecond), pf.overlap)
	}

	// The assertions.
	rep.assertClean(t)
	if rep.dups != rep.dupsBy[dupFault] {
		t.Errorf("history: duplicates %v; want only those of messages A delivered before its cut", rep.dupsBy)
	}
	if missing != 0 {
		t.Errorf("%d of %d produced messages never delivered", missing, produced)
	}
	if f.aLongest > fenceBound {
		t.Errorf("A kept delivering %v after the cut; the self-fence bound is %v", f.aLongest, fenceBound)
	}
	for _, o := range f.overlapList {
		t.Errorf("true overlap: %s", o)
	}
	for _, d := range f.dupOther {
		t.Errorf("duplicate not explained by A's uncommitted messages: %s", d)
	}
	for _, p := range all {
		pf := f.parts[p]
		if !pf.bSeen {
			t.Errorf("partition %d: B never delivered it", p)
			continue
		}
		if want, ok := frozen[p]; ok && pf.bStart != max(want, 0) {
			t.Errorf("partition %d: B started at %d, but A's last commit before the cut was %d", p, pf.bStart, want)
		}
	}
}

// frozenOffsets reads the committed offset of every partition that A still
// owns before and after the read: it is A's last commit before the cut.
func frozenOffsets(state *groupState, topic string, partitions int32, aID string) map[int32]int64 {
	out := make(map[int32]int64)
	for p := int32(0); p < partitions; p++ {
		before, err := state.cg.PartitionOwner(topic, p)
		if err != nil || before == nil || before.ID != aID {
			continue
		}
		o, err := state.cg.FetchOffset(topic, p)
		if err != nil {
			continue
		}
		after, err := state.cg.PartitionOwner(topic, p)
		if err != nil || after == nil || after.ID != aID {
			continue
		}
		out[p] = o
	}
	return out
}

func frozenOr(frozen map[int32]int64, p int32) string {
	if o, ok := frozen[p]; ok {
		return fmt.Sprint(o)
	}
	return "?"
}

// zombiePartition holds the figures of one partition.
type zombiePartition struct {
	aAfterCut int           // A's deliveries after the cut and before B's first
	aLast     time.Duration // the last of them, after the cut
	bSeen     bool
	bFirst    time.Time // B's first and last delivery
	bLast     time.Time
	bStart    int64 // offset of B's first delivery
	overlap   int   // A's deliveries inside [bFirst, bLast]
}

type zombieFigures struct {
	all         []delivery
	parts       map[int32]*zombiePartition
	perConsumer map[int]int
	aAfterCut   int
	aLongest    time.Duration
	minGap      time.Duration
	maxGap      time.Duration
	overlap     int
	overlapList []string
	dupAllowed  int
	dupOther    []string
}

// aDuringCut counts A's deliveries between the cut and the restore.
func (f *zombieFigures) aDuringCut(cut, restore time.Time) int {
	n := 0
	for _, d := range f.all {
		if d.consumer == zombieA && !d.at.Before(cut) && d.at.Before(restore) {
			n++
		}
	}
	return n
}

// analyzeZombie computes, per partition, A's deliveries after the cut and
// before B's first delivery (the self-fence window), A's deliveries while B
// was delivering the partition (between B's first and last delivery: true
// overlap; A's share after it takes partitions back comes after B's last),
// and classifies duplicates: a message delivered once by A and once by B at
// an offset at or above A's last commit is allowed; anything else is not.
func analyzeZombie(all []delivery, cut time.Time, frozen map[int32]int64) *zombieFigures {
	f := &zombieFigures{all: all, parts: make(map[int32]*zombiePartition), perConsumer: make(map[int]int), minGap: -1}
	part := func(p int32) *zombiePartition {
		if f.parts[p] == nil {
			f.parts[p] = &zombiePartition{}
		}
		return f.parts[p]
	}
	for _, d := range all {
		f.perConsumer[d.consumer]++
		if d.consumer != zombieB || d.at.Before(cut) {
			continue
		}
		pf := part(d.partition)
		if !pf.bSeen || d.at.Before(pf.bFirst) {
			pf.bFirst, pf.bStart = d.at, d.offset
		}
		if !pf.bSeen || d.at.After(pf.bLast) {
			pf.bLast = d.at
		}
		pf.bSeen = true
	}
	for _, d := range all {
		if d.consumer != zombieA || d.at.Before(cut) {
			continue
		}
		pf := part(d.partition)
		switch {
		case !pf.bSeen || d.at.Before(pf.bFirst):
			pf.aAfterCut++
			f.aAfterCut++
			if s := d.at.Sub(cut); s > pf.aLast {
				pf.aLast = s
			}
		case !d.at.After(pf.bLast):
			pf.overlap++
			f.overlap++
			f.overlapList = append(f.overlapList, fmt.Sprintf("A delivered %s/%d@%d %v after the cut, while B delivered the partition from +%v to +%v",
				d.topic, d.partition, d.offset, d.at.Sub(cut).Round(time.Millisecond),
				pf.bFirst.Sub(cut).Round(time.Millisecond), pf.bLast.Sub(cut).Round(time.Millisecond)))
		}
	}
	for p, pf := range f.parts {
		f.aLongest = max(f.aLongest, pf.aLast)
		if !pf.bSeen {
			continue
		}
		// A's last delivery of p before B's first, the cut notwithstanding.
		var aLast time.Time
		for _, d := range all {
			if d.consumer == zombieA && d.partition == p && d.at.Before(pf.bFirst) && d.at.After(aLast) {
				aLast = d.at
			}
		}
		if aLast.IsZero() {
			continue
		}
		gap := pf.bFirst.Sub(aLast)
		if f.minGap < 0 || gap < f.minGap {
			f.minGap = gap
		}
		f.maxGap = max(f.maxGap, gap)
	}

	type key struct {
		topic     string
		partition int32
		offset    int64
	}
	by := make(map[key][]delivery)
	for _, d := range all {
		k := key{d.topic, d.partition, d.offset}
		by[k] = append(by[k], d)
	}
	for k, ds := range by {
		if len(ds) < 2 {
			continue
		}
		committed, ok := frozen[k.partition]
		if !ok && f.parts[k.partition] != nil {
			committed = f.parts[k.partition].bStart // B resumes at A's last commit
		}
		// Allowed: one delivery by A before B took the partition over (the
		// old session), one by B, of a message A had not committed.
		pf := f.parts[k.partition]
		if len(ds) == 2 && pf != nil && pf.bSeen && k.offset >= committed &&
			((ds[0].consumer == zombieA && ds[1].consumer == zombieB && ds[0].at.Before(pf.bFirst)) ||
				(ds[1].consumer == zombieA && ds[0].consumer == zombieB && ds[1].at.Before(pf.bFirst))) {
			f.dupAllowed++
			continue
		}
		var who []string
		for _, d := range ds {
			who = append(who, fmt.Sprintf("consumer %d at +%v", d.consumer, d.at.Sub(cut).Round(time.Millisecond)))
		}
		f.dupOther = append(f.dupOther, fmt.Sprintf("%s/%d@%d (committed at the cut: %d) delivered by %v", k.topic, k.partition, k.offset, committed, who))
	}
	sort.Strings(f.dupOther)
	if f.minGap < 0 {
		f.minGap = 0
	}
	return f
}
