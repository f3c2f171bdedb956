package integration

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationChaos: instances join, leave cleanly and crash at random
// over a 64-partition topic while a producer keeps producing. Afterwards the
// group must converge (every partition owned by exactly the instance the
// assignment names, each a live registered instance) within the session
// timeout plus a few seconds, every produced message must have been
// delivered, and no committed offset may ever have gone backwards.
//
// Churn lasts 20 s by default; ZKGROUP_SOAK=1 makes it 2 minutes.
// ZKGROUP_CHAOS_SEED=<n> replays a run's sequence of actions (the timing of
// the stack still varies).
//
// A crash: there is no API to kill an instance, and a real process crash
// would end the ZooKeeper session at once (the kernel closes the socket, the
// server still waits for the session timeout, as here). So every instance
// talks to ZooKeeper through its own tcpproxy, and a crash Cuts that proxy
// for good: the instance keeps its Kafka connections and its partition
// consumers, cannot commit or release, fences itself after
// Session.SelfFenceFraction of the session timeout, and its session expires
// on the server, which deletes its registration and claims. That is the
// harder case than a dead process: a zombie still fetching. The zombie is
// Closed later (as an operator would kill it); that Close cannot reach
// ZooKeeper and must still return.
//
// On a ZooKeeper ensemble (ZK_NODES=3) the churn also hits ZooKeeper, one
// fault at a time: the leader killed and restarted, or server 1 cut off
// from its peers for a few seconds (its clients' sessions expire, as the
// leader no longer hears of them) and healed. A history of every delivery
// and every committed offset is checked at the end: nothing lost, no offset
// backwards, no partition delivered by two instances at once, and every
// duplicate explained by a crash or a ZooKeeper fault.
func TestIntegrationChaos(t *testing.T) {
	testenv.Integration(t)

	churn := 20 * time.Second
	if os.Getenv("ZKGROUP_SOAK") != "" {
		churn = 2 * time.Minute
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ZKGROUP_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ZKGROUP_CHAOS_SEED: %v", err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	const (
		partitions    = 64
		maxLive       = 10
		minLive       = 2
		maxZombies    = 3
		rate          = 80              // messages per second
		maxMessages   = 12000           // bound on the total produced
		session       = 4 * time.Second // ZooKeeper session timeout of every instance
		convergeSlack = 8 * time.Second // "plus a few seconds"
	)
	t.Logf("chaos: churn %v, seed %d (ZKGROUP_CHAOS_SEED), %d partitions, session timeout %v", churn, seed, partitions, session)

	topic := newTopic(t, partitions)
	group := testenv.UniqueName("chaos")
	h := newHistory(t, group, topic, partitions) // before the first join
	zkFaults := testenv.ZKNodes() == 3
	if zkFaults {
		t.Cleanup(func() { restoreEnsemble(t) })
	}

	checker := zkClient(t)
	l := newLedger()
	h.attach(l)
	f := &chaosFleet{
		t: t, group: group, topic: topic, session: session, ledger: l, history: h,
		leaving: map[bool]*sync.WaitGroup{false: {}, true: {}},
		crashed: make(map[int]bool), maxClose: make(map[bool]time.Duration), errs: make(map[string]int),
	}
	t.Cleanup(f.shutdown) // on any failure: nothing may outlive the test

	prod := startProducerThroughFaults(t, topic, 4, 4*time.Second/rate, maxMessages)
	defer prod.stop()

	// The fleet starts with a few instances, then churns.
	for i := 0; i < 3; i++ {
		f.join()
	}
	start := time.Now()
	actions := map[string]int{}
	var zk zkChaos
	for time.Since(start) < churn {
		time.Sleep(time.Duration(250+rng.IntN(1000)) * time.Millisecond)
		f.closeExpiredZombies(session + 2*time.Second)
		if zk.due() {
			zk.end(t, h)
		}
		live := f.liveCount()
		switch r := rng.IntN(100); {
		case zkFaults && !zk.active() && r >= 75:
			actions[zk.start(t, h, rng)]++
		case live < maxLive && (r < 45 || live <= minLive):
			f.join()
			actions["join"]++
		case live > minLive && r < 80:
			f.leave(rng.IntN(live))
			actions["close"]++
		case live > minLive && f.zombieCount() < maxZombies:
			f.crash(rng.IntN(live))
			actions["crash"]++
		default:
			actions["idle"]++
		}
	}
	// The last actions are the worst case for convergence: one instance
	// crashes (its partitions are free only once its session expires) and
	// one leaves cleanly, at the same moment.
	for f.liveCount() < minLive+2 {
		f.join()
		actions["join"]++
	}
	if zk.active() {
		zk.end(t, h)
	}
	f.crash(rng.IntN(f.liveCount()))
	f.leave(rng.IntN(f.liveCount()))
	actions["crash"]++
	actions["close"]++
	churnEnd := time.Now()
	t.Logf("churn over after %v, ending with a crash and a clean leave: actions %v; %d live, %d zombies not closed yet",
		churnEnd.Sub(start).Round(time.Millisecond), actions, f.liveCount(), f.zombieCount())

	// Convergence, measured from the end of churn.
	deadline := churnEnd.Add(session + convergeSlack)
	var why string
	for {
		var ok bool
		ok, why = h.convergedNow(expectation{liveCount: f.liveCount(), assigned: true})
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no convergence within %v (session timeout %v + %v) of the end of churn: %s",
				time.Since(churnEnd).Round(time.Millisecond), session, convergeSlack, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
	converged := time.Since(churnEnd)
	t.Logf("converged %v after the end of churn: all %d partitions owned by the assigned one of %d live registered instances",
		converged.Round(time.Millisecond), partitions, f.liveCount())

	// Stop producing, then everything produced must arrive.
	produced := prod.nextOffsets()
	total := 0
	for _, n := range produced {
		total += int(n)
	}
	drainStart := time.Now()
	var lost int
	for {
		if lost = l.missing(topic, produced); lost == 0 {
			break
		}
		if time.Since(drainStart) > 60*time.Second {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("produced %d messages (%d send errors) in %v; all delivered %v after the producer stopped",
		total, prod.failedSends(), time.Since(start).Round(time.Second), time.Since(drainStart).Round(time.Millisecond))

	// The zombies left go now, then the survivors.
	f.closeExpiredZombies(0)
	f.shutdown()

	rep := h.checkWith(expectation{produced: produced, liveCount: 0})
	rep.log(t)
	if rep.failed(invOverlap) {
		t.Errorf("a partition was delivered by two instances at once (see the history above)")
	}
	if n := rep.dupsBy[dupClean]; n != 0 {
		t.Errorf("%d duplicates explained by no crash, fault or reset (a clean rebalance must not redeliver)", n)
	}

	dups, afterCrash := f.duplicates()
	regressions := rep.violations[invBackwards]
	t.Logf("RESULT churn=%v seed=%d converge=%v lost=%d regressions=%d duplicates=%d (after a crash %d, other %d) "+
		"deliveries=%d distinct=%d commits-seen=%d (coalesced %d) maxCleanClose=%v maxZombieClose=%v crashes=%d",
		churn, seed, converged.Round(time.Millisecond), lost, len(regressions), dups, afterCrash, dups-afterCrash,
		len(l.all), l.distinct(), rep.offsetWrites, rep.missedSets, f.maxClose[false].Round(time.Millisecond), f.maxClose[true].Round(time.Millisecond),
		f.crashes)
	f.logErrorSummary()

	if lost != 0 {
		t.Errorf("%d of %d produced messages were never delivered", lost, total)
	}
	for _, r := range regressions {
		t.Errorf("committed offset went backwards: %s", r)
	}
	if d := dups - afterCrash; d != 0 && !zkFaults {
		t.Errorf("%d duplicate deliveries not explained by a crash (a clean rebalance must not redeliver)", d)
	}
	assertInOrder(t, l)

	// Every survivor committed everything on Close.
	cg := checker.Consumergroup(group)
	for p := int32(0); p < partitions; p++ {
		want, ok := produced[p]
		if !ok {
			continue
		}
		got, err := cg.FetchOffset(topic, p)
		if err != nil || got != want {
			t.Errorf("%s/%d: committed offset after the last Close = %d, %v; want %d", topic, p, got, err, want)
		}
	}
	if d, bound := f.maxClose[false], testConfig().Offsets.ProcessingTimeout+5*time.Second; d > bound {
		t.Errorf("a clean Close took %v, more than ProcessingTimeout + 5s (%v)", d, bound)
	}
	// A zombie's Close cannot reach ZooKeeper: the Close bound still holds
	// it by ProcessingTimeout plus a margin (the session is closed first,
	// which fails every pending request at once).
	if d, bound := f.maxClose[true], testConfig().Offsets.ProcessingTimeout+5*time.Second; d > bound {
		t.Errorf("a Close of a crashed instance took %v, more than ProcessingTimeout + 5s (%v)", d, bound)
	}
}

// chaosInstance is one member of the fleet.
type chaosInstance struct {
	n       int
	cg      *consumergroup.ConsumerGroup
	proxies []*tcpproxy.Proxy // its only ways to ZooKeeper, one per server
	done    <-chan struct{}   // its consumer loop ended
	cutAt   time.Time         // when it crashed; zero if it did not
}

func (in *chaosInstance) cut() {
	for _, p := range in.proxies {
		p.Cut()
	}
}

func (in *chaosInstance) closeProxies() {
	for _, p := range in.proxies {
		_ = p.Close()
	}
}

// chaosFleet owns the instances of the chaos test. Only the test goroutine
// calls its methods, except the background Closes, which touch only mu's
// fields.
type chaosFleet struct {
	t       *testing.T
	group   string
	topic   string
	session time.Duration
	ledger  *ledger
	history *history

	next    int
	live    []*chaosInstance
	zombies []*chaosInstance
	crashes int

	leaving  map[bool]*sync.WaitGroup // background Closes, by zombie or not
	mu       sync.Mutex
	crashed  map[int]bool           // consumer numbers of the instances that crashed
	all      []*chaosInstance       // everything ever joined, for shutdown
	maxClose map[bool]time.Duration // longest Close, by zombie or not
	errs     map[string]int         // errors seen on Errors(), by instance kind and kind of error
}

func (f *chaosFleet) liveCount() int   { return len(f.live) }
func (f *chaosFleet) zombieCount() int { return len(f.zombies) }

func (f *chaosFleet) join() {
	f.t.Helper()
	nodes, chroot := kazoo.ParseConnectionString(testenv.ZKAddr())
	in := &chaosInstance{}
	var addrs []string
	for _, node := range nodes {
		proxy, err := tcpproxy.New(node)
		if err != nil {
			in.closeProxies()
			f.t.Fatalf("proxy: %v", err)
		}
		in.proxies = append(in.proxies, proxy)
		addrs = append(addrs, proxy.Addr())
	}
	cfg := testConfig()
	cfg.Zookeeper.Timeout = f.session
	cg, err := consumergroup.JoinConsumerGroup(f.group, []string{f.topic}, []string{strings.Join(addrs, ",") + chroot}, cfg)
	if err != nil {
		in.closeProxies()
		f.t.Fatalf("join %s: %v", f.group, err)
	}
	f.next++
	in.n, in.cg = f.next, cg
	in.done = f.consume(in)
	f.live = append(f.live, in)
	f.mu.Lock()
	f.all = append(f.all, in)
	f.mu.Unlock()
}

// consume reads in's messages into the ledger, marking each one, and
// tallies its errors, until Close closes both channels.
func (f *chaosFleet) consume(in *chaosInstance) <-chan struct{} {
	return readGroup(in.cg, in.n, f.ledger, 0, func(err error) { f.noteError(in, err) })
}

func (f *chaosFleet) noteError(in *chaosInstance, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kind := "live"
	if f.crashed[in.n] {
		kind = "zombie"
	}
	key := kind + ": " + chaosErrorKind(err)
	f.errs[key]++
	if f.errs[key] <= 2 || os.Getenv("ZKGROUP_DEBUG") != "" {
		f.t.Logf("instance %d (%s): error: %v", in.n, kind, err)
	}
}

// chaosErrorKind shortens an error to a stable class for the summary.
func chaosErrorKind(err error) string {
	var pe *consumergroup.PartitionError
	var oc *consumergroup.OffsetConflictError
	switch {
	case errors.As(err, &oc):
		return "offset conflict"
	case errors.Is(err, kazoo.ErrClaimLost):
		return "claim lost"
	case errors.As(err, &pe):
		msg := pe.Err.Error()
		if pe.Topic != "" {
			msg = strings.ReplaceAll(msg, pe.Topic, "<topic>")
		}
		if i := strings.IndexAny(msg, "0123456789"); i > 0 {
			msg = msg[:i]
		}
		return "partition: " + msg
	}
	return fmt.Sprintf("%T", err)
}

func (f *chaosFleet) takeLive(i int) *chaosInstance {
	in := f.live[i]
	f.live = slices.Delete(f.live, i, i+1)
	return in
}

// leave Closes live instance i in the background, as a clean shutdown.
func (f *chaosFleet) leave(i int) {
	f.closeInBackground(f.takeLive(i), false)
}

// crash cuts live instance i off ZooKeeper for good.
func (f *chaosFleet) crash(i int) {
	in := f.takeLive(i)
	f.mu.Lock()
	f.crashed[in.n] = true
	f.mu.Unlock()
	f.history.fault("crash", in.n)
	in.cutAt = time.Now()
	in.cut()
	f.zombies = append(f.zombies, in)
	f.crashes++
}

// closeExpiredZombies Closes, in the background, the zombies cut off longer
// than age.
func (f *chaosFleet) closeExpiredZombies(age time.Duration) {
	keep := f.zombies[:0]
	for _, z := range f.zombies {
		if time.Since(z.cutAt) >= age {
			f.closeInBackground(z, true)
		} else {
			keep = append(keep, z)
		}
	}
	f.zombies = keep
}

func (f *chaosFleet) closeInBackground(in *chaosInstance, zombie bool) {
	wg := f.leaving[zombie]
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		err := in.cg.Close()
		took := time.Since(start)
		<-in.done
		in.closeProxies()
		f.mu.Lock()
		defer f.mu.Unlock()
		if took > f.maxClose[zombie] {
			f.maxClose[zombie] = took
		}
		if err != nil && !zombie {
			f.t.Errorf("instance %d: clean Close: %v", in.n, err)
		}
	}()
}

// waitLeaving waits for every background Close.
func (f *chaosFleet) waitLeaving() {
	f.leaving[false].Wait()
	f.leaving[true].Wait()
}

// shutdown Closes every instance still open and waits for all of them.
func (f *chaosFleet) shutdown() {
	for len(f.live) > 0 {
		f.leave(0)
	}
	f.closeExpiredZombies(0)
	f.waitLeaving()
	f.mu.Lock()
	all := append([]*chaosInstance(nil), f.all...)
	f.mu.Unlock()
	for _, in := range all { // instances whose Close was never started (a Fatal mid-way)
		if !in.cg.Closed() {
			_ = in.cg.Close()
		}
		<-in.done
		in.closeProxies()
	}
}

// duplicates counts extra deliveries, and how many of them follow an earlier
// delivery of the same message by an instance that later crashed (expected:
// a crashed instance could not commit what it had delivered).
func (f *chaosFleet) duplicates() (total, afterCrash int) {
	f.ledger.mu.Lock()
	defer f.ledger.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	byKey := make(map[string][]delivery)
	for _, d := range f.ledger.all {
		k := fmt.Sprintf("%s/%d/%d", d.topic, d.partition, d.offset)
		byKey[k] = append(byKey[k], d)
	}
	for _, ds := range byKey {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].at.Before(ds[j].at) })
		byCrashed := false
		for i, d := range ds {
			if i > 0 {
				total++
				if byCrashed {
					afterCrash++
				}
			}
			if f.crashed[d.consumer] {
				byCrashed = true
			}
		}
	}
	return total, afterCrash
}

func (f *chaosFleet) logErrorSummary() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var kinds []string
	for k := range f.errs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		f.t.Logf("errors on Errors(): %5d  %s", f.errs[k], k)
	}
}

// zkChaos runs the ZooKeeper faults of the chaos test, one at a time: the
// leader killed (restarted when the fault ends), or server 1 cut off from
// its peers (healed when it ends).
type zkChaos struct {
	name   string // "" when no fault is going on
	server int
	kill   bool
	until  time.Time
}

func (z *zkChaos) active() bool { return z.name != "" }
func (z *zkChaos) due() bool    { return z.active() && time.Now().After(z.until) }

// start begins a fault lasting 1 to 6 s and returns its kind.
func (z *zkChaos) start(t *testing.T, h *history, rng *rand.Rand) string {
	z.kill = rng.IntN(2) == 0
	if z.kill {
		z.server = testenv.EnsembleLeader(t)
		z.name = fmt.Sprintf("kill leader %d", z.server)
		h.fault(z.name)
		testenv.KillZK(t, z.server)
	} else {
		z.server = 1
		z.name = fmt.Sprintf("cut server 1 (%s) from its peers", testenv.ZKMode(1))
		h.fault(z.name)
		testenv.CutZK(t, z.server)
	}
	z.until = time.Now().Add(time.Duration(1000+rng.IntN(5000)) * time.Millisecond)
	t.Logf("zookeeper fault: %s", z.name)
	if z.kill {
		return "zk leader kill"
	}
	return "zk follower cut"
}

// end ends the fault going on.
func (z *zkChaos) end(t *testing.T, h *history) {
	if z.kill {
		testenv.StartZK(t, z.server)
	} else {
		testenv.HealZK(t, z.server)
	}
	h.endFault(z.name)
	z.name = ""
}
