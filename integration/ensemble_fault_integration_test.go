package integration

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Consumer ids of the ensemble tests' ledgers.
const (
	ensembleA = 1
	ensembleB = 2
)

// TestIntegrationEnsembleFollowerCut: instance A reaches the ensemble only
// through server 1, a follower, and B through the two other servers. Server
// 1 is cut off from its peers while its clients stay connected: it goes on
// answering A's reads for syncLimit ticks, longer than A's session
// timeout, while the leader, which no longer hears of A, expires A's
// session and B takes A's partitions. A's fence trusts only answers the
// leader stands behind, so it pauses before the expiry, and no message of a
// partition is delivered by A once B has begun delivering it.
func TestIntegrationEnsembleFollowerCut(t *testing.T) {
	testenv.Ensemble(t)
	t.Cleanup(func() { restoreEnsemble(t) })
	makeFollower(t, 1)

	const (
		partitions     = int32(4)
		sessionTimeout = 4 * time.Second
	)
	if follower := ensembleSyncLimit * ensembleTick; follower <= sessionTimeout {
		t.Fatalf("the cut follower serves its clients for %v, not longer than the session timeout %v: nothing to test", follower, sessionTimeout)
	}
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	topics := []string{topic}
	h := newHistory(t, group, topic, partitions)
	l := newLedger()
	h.attach(l)
	prod := startProducer(t, topic, 4, 10*time.Millisecond, 1_000_000) // about 400 messages a second

	cfg := testConfig()
	cfg.Zookeeper.Timeout = sessionTimeout
	// Rare commits, as by default: a commit in flight would hold back A's
	// reads on the cut follower (a session's requests are answered in
	// order) and hide what the fence itself does.
	cfg.Offsets.CommitInterval = consumergroup.DefaultCommitInterval
	a := joinVia(t, testenv.ZKServerAddr(1), group, topics, cfg)
	doneA := readGroup(a, ensembleA, l, 0, func(err error) { t.Logf("A: %v", err) })
	waitFor(t, 30*time.Second, "A to deliver every partition", func() bool {
		return l.deliveredBy(ensembleA, time.Time{}, allPartitions(partitions))
	})
	// A's id is read while A is alone: once B joins, a partition A
	// delivered last may already be B's.
	idA := waitInstances(t, h, 1)[0]
	b := joinVia(t, testenv.ZKServerAddr(2)+","+testenv.ZKServerAddr(3), group, topics, cfg)
	doneB := readGroup(b, ensembleB, l, 0, func(err error) { t.Logf("B: %v", err) })
	t.Cleanup(func() { // on an early failure
		closeGroup(t, a)
		closeGroup(t, b)
		<-doneA
		<-doneB
	})
	waitInstances(t, h, 2)
	var ofA []int32
	waitFor(t, 30*time.Second, "the partitions split between A and B", func() bool {
		ofA = ownedBy(h, idA, partitions)
		return len(ofA) == int(partitions)/2 && deliveredAny(l, ensembleB)
	})
	time.Sleep(time.Second) // both deliver steadily

	h.fault("cut follower 1 from its peers", ensembleA)
	cut := time.Now()
	testenv.CutZK(t, 1)
	waitFor(t, 30*time.Second, "B to deliver A's partitions", func() bool {
		return l.deliveredBy(ensembleB, cut, ofA)
	})
	// Watched through server 2: the history's own client may sit on the
	// cut follower, which goes on showing A registered until it gives up.
	onTwo := connectZK(t, testenv.ZKServerAddr(2)).Consumergroup(group)
	expiredAt := firstAbsence(func() []string {
		list, _ := onTwo.Instances()
		var ids []string
		for _, i := range list {
			ids = append(ids, i.ID)
		}
		return ids
	}, idA, cut)
	time.Sleep(time.Second)
	testenv.HealZK(t, 1)
	h.faultEnd()
	healed := time.Now()

	counts, err := prod.stop()
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	rep := h.checkWith(expectation{produced: counts, liveCount: 2, within: sessionTimeout + time.Second + time.Since(healed),
		drain: 60 * time.Second})
	closeGroup(t, a)
	closeGroup(t, b)
	<-doneA
	<-doneB
	rep.log(t)

	lastA, firstB := lastDeliveryBy(l, ensembleA, cut, healed), firstDeliveryOf(l, ensembleB, cut, ofA)
	t.Logf("follower cut: A paused %v after the cut (last delivery before the heal); A's session gone %v after the cut; "+
		"B's first delivery of A's partitions %v after the cut; overlapping deliveries %d",
		lastA.Sub(cut).Round(time.Millisecond), expiredAt.Sub(cut).Round(time.Millisecond),
		firstB.Sub(cut).Round(time.Millisecond), rep.overlapDeliveries)
	if expiredAt.IsZero() {
		t.Errorf("A's session was never seen gone through server 2, although B took its partitions")
	}
	if !lastA.IsZero() && !firstB.IsZero() && !lastA.Before(firstB) {
		t.Errorf("A delivered at %v, after B's first delivery of its partitions at %v",
			lastA.Sub(cut), firstB.Sub(cut))
	}
	rep.assertClean(t)
}

// TestIntegrationEnsembleLeaderKilled: the leader of the ensemble is killed
// while a group of two commits every 100 ms, and restarted once another
// server leads. The sessions outlive the election, so nothing moves: 0
// duplicates, no offset conflict (a commit whose reply died with the leader
// is resolved as ours), no offset going backwards, nothing lost.
func TestIntegrationEnsembleLeaderKilled(t *testing.T) {
	testenv.Ensemble(t)
	t.Cleanup(func() { restoreEnsemble(t) })

	const partitions = int32(4)
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	topics := []string{topic}
	h := newHistory(t, group, topic, partitions)
	l := newLedger()
	h.attach(l)
	prod := startProducer(t, topic, 4, 10*time.Millisecond, 1_000_000)

	cfg := testConfig()
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	var conflicts atomic.Int64
	onErr := func(who string) func(error) {
		return func(err error) {
			var c *consumergroup.OffsetConflictError
			if errors.As(err, &c) {
				conflicts.Add(1)
				t.Errorf("%s: false conflict: %v", who, err)
				return
			}
			t.Logf("%s: %v", who, err)
		}
	}
	all := strings.Join(testenv.ZKServers(), ",")
	a := joinVia(t, all, group, topics, cfg)
	doneA := readGroup(a, ensembleA, l, 0, onErr("A"))
	b := joinVia(t, all, group, topics, cfg)
	doneB := readGroup(b, ensembleB, l, 0, onErr("B"))
	t.Cleanup(func() {
		closeGroup(t, a)
		closeGroup(t, b)
		<-doneA
		<-doneB
	})
	waitInstances(t, h, 2)
	waitFor(t, 30*time.Second, "both to deliver", func() bool {
		return deliveredAny(l, ensembleA) && deliveredAny(l, ensembleB)
	})
	time.Sleep(time.Second)

	var elections []string
	for round := 0; round < 2; round++ {
		old := testenv.EnsembleLeader(t)
		h.fault(fmt.Sprintf("kill leader %d", old))
		killed := time.Now()
		testenv.KillZK(t, old)
		leader := testenv.WaitLeader(t, 30*time.Second, old)
		elected := time.Since(killed)
		testenv.StartZK(t, old)
		h.faultEnd()
		elections = append(elections, fmt.Sprintf("%d->%d in %v", old, leader, elected.Round(time.Millisecond)))
		time.Sleep(2 * time.Second)
	}

	counts, err := prod.stop()
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	rep := h.checkWith(expectation{produced: counts, liveCount: 2, within: testConfig().Zookeeper.Timeout + time.Second,
		drain: 60 * time.Second})
	closeGroup(t, a)
	closeGroup(t, b)
	<-doneA
	<-doneB
	rep.log(t)
	t.Logf("leader killed twice (%s): %d deliveries, %d duplicates, %d conflicts", strings.Join(elections, ", "),
		rep.deliveries, rep.dups, conflicts.Load())
	if rep.dups != 0 {
		t.Errorf("%d duplicates, want 0: no session expired, nothing moved", rep.dups)
	}
	rep.assertClean(t)
}

// waitInstances waits until n instances are registered and returns their
// ids.
func waitInstances(t *testing.T, h *history, n int) []string {
	t.Helper()
	var ids []string
	waitFor(t, 30*time.Second, fmt.Sprintf("%d registered instances", n), func() bool {
		ids = h.instances()
		return len(ids) == n
	})
	return ids
}

// ownedBy lists the partitions id owns now.
func ownedBy(h *history, id string, partitions int32) []int32 {
	var out []int32
	owners := h.snapshot().owners
	for p := int32(0); p < partitions; p++ {
		if owners[p] == id {
			out = append(out, p)
		}
	}
	return out
}

// firstAbsence polls instances until id is no longer among them and
// returns when that was seen (zero after 30 s).
func firstAbsence(instances func() []string, id string, since time.Time) time.Time {
	deadline := since.Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !slices.Contains(instances(), id) {
			return time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Time{}
}

// lastDeliveryBy is the time of consumer's last delivery in [from, to).
func lastDeliveryBy(l *ledger, consumer int, from, to time.Time) time.Time {
	var last time.Time
	for _, d := range l.snapshot() {
		if d.consumer == consumer && !d.at.Before(from) && d.at.Before(to) && d.at.After(last) {
			last = d.at
		}
	}
	return last
}

// firstDeliveryOf is the time of consumer's first delivery of one of ps
// after from.
func firstDeliveryOf(l *ledger, consumer int, from time.Time, ps []int32) time.Time {
	var first time.Time
	for _, d := range l.snapshot() {
		if d.consumer == consumer && d.at.After(from) && slices.Contains(ps, d.partition) &&
			(first.IsZero() || d.at.Before(first)) {
			first = d.at
		}
	}
	return first
}

// deliveredAny reports whether consumer delivered anything yet.
func deliveredAny(l *ledger, consumer int) bool {
	for _, d := range l.snapshot() {
		if d.consumer == consumer {
			return true
		}
	}
	return false
}
