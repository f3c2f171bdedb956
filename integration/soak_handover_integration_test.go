package integration

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// The hand-over soak: partitions move between members over and over, with
// offset resets and lost ZooKeeper replies injected around the moves, and an
// observer measures how long any partition stays unowned.
//
// Setup: one topic of soakPartitions partitions, a producer writing steadily
// (soakBatch messages every soakPeriod), and 3 or 4 members in this process
// (JoinConsumerGroup; every message delivered is marked at once with
// CommitUpto). Each member reaches ZooKeeper through its own tcpproxy (to
// lose its replies; listed twice in its connect string, so that it
// reconnects at once, as a client of an ensemble does, where with one
// address go-zookeeper sleeps a second first) and a shared link that
// delays every byte by
// soakLinkDelay each way (a round trip of 4 ms, as between hosts or zones;
// on loopback the window between an old owner's final commit and its
// release is a few tens of microseconds, which no injected fault could
// hit). Session timeout soakSession, Offsets.ProcessingTimeout
// soakProcessing, CommitInterval 100 ms, Claim.Budget = ProcessingTimeout
// + session timeout + 1 s: a claim that fails for the whole budget waited
// longer than any old owner may legitimately hold on.
//
// Each cycle changes the membership (close a random member and start a
// fresh one, one after the other or at once; or add one; or close one) and,
// at random (seeded; the seed is printed, ZKGROUP_SOAK_SEED replays it),
// injects any of:
//   - a reset of the group's offsets (kazoo ResetOffsets, from a client of
//     its own) 0-500 ms after the change starts;
//   - a reset aimed at a hand-over: the moment the observer sees a commit
//     of a partition whose owner is no longer its assignee (the old
//     owner's final commit, its release next), ResetOffset of that
//     partition to the offset just committed (an operator's fenced set:
//     it bumps the epoch as ResetOffsets does, and redelivers nothing);
//   - lost replies (tcpproxy.LoseReplies, 50-250 ms, then the connection
//     drops) on a random member 0-300 ms after the change starts;
//   - lost replies aimed at a claim: the moment the observer sees an
//     owner node created by the partition's assignee (its claim applied;
//     the reply is still crossing the delayed link), on that member's
//     proxy, for 100-300 ms, while the membership may change again (the
//     second step of a replacement) before the member can try again.
//
// The observer (its own ZooKeeper clients) follows the registrations, every
// owner node and every offset node through watches, and records per
// partition every unowned interval (no owner node) and every hand-over gap
// (the owner node missing or held by another instance than the one the
// group's assignment of the registered instances names), and counts
// hand-overs (the owner changing from one instance to another).
// After each cycle the driver waits until the registered instances are the
// live members and every partition is owned by its assignee.
//
// The bound, from docs/guarantees.md: a partition is owned again within the
// session timeout + one round trip after its owner stops wanting it, plus
// the old owner's drain; every message is marked as soon as it is
// delivered, so a drain ends at once, and the bound is the session timeout
// granted + 1 s (one round trip and scheduling). The soak fails if any
// unowned interval or hand-over gap exceeds it, if any member reports a
// *claim.Error (a claim that failed for its whole budget), if the group
// does not converge at the end within the bound, or if a produced message
// is never delivered. An *OffsetConflictError is logged as a warning:
// every writer of offsets here is fenced, so none should be reported.
//
// ZKGROUP_SOAK_FAULTS narrows the faults to a comma-separated list of
// reset, aimed-reset, lost and aimed-lost (default: all four), to tell
// which fault a failure needs.
//
// TestIntegrationFaultHandoverSoak runs in the faults phase (150
// hand-overs, 10-20 s); TestIntegrationFaultHandoverSoakFull runs the full soak with
// ZKGROUP_SOAK=1 (ZKGROUP_SOAK_HANDOVERS hand-overs, default 500).
// Without the race detector: its reconnects trip go-zookeeper's known race
// on reconnect.

const (
	soakPartitions = int32(12)
	soakBatch      = 24
	soakPeriod     = 50 * time.Millisecond
	soakSession    = 4 * time.Second
	soakProcessing = 2 * time.Second
	soakLinkDelay  = 2 * time.Millisecond
	soakMinMembers = 3
	soakMaxMembers = 4
)

func TestIntegrationFaultHandoverSoak(t *testing.T) {
	faultTest(t)
	if os.Getenv("ZKGROUP_SOAK") != "" {
		t.Skip("ZKGROUP_SOAK is set: TestIntegrationFaultHandoverSoakFull runs the full soak instead")
	}
	runHandoverSoak(t, 150, 60*time.Second)
}

func TestIntegrationFaultHandoverSoakFull(t *testing.T) {
	faultTest(t)
	if os.Getenv("ZKGROUP_SOAK") == "" {
		t.Skip("the full hand-over soak (at least 500 hand-overs, several minutes): " +
			"ZKGROUP_SOAK=1 ZKGROUP_FAULTS=1 [ZKGROUP_SOAK_HANDOVERS=N] go test -count=1 -timeout 60m -run TestIntegrationFaultHandoverSoak -v ./integration/")
	}
	n := 500
	if s := os.Getenv("ZKGROUP_SOAK_HANDOVERS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("ZKGROUP_SOAK_HANDOVERS=%q: want a positive number", s)
		}
		n = v
	}
	runHandoverSoak(t, n, 50*time.Minute)
}

// soakMember is one member of the soak's group.
type soakMember struct {
	id    string
	proxy *tcpproxy.Proxy
	cg    *consumergroup.ConsumerGroup
	done  <-chan struct{}
}

type soakRun struct {
	t      *testing.T
	rng    *rand.Rand // the driver's only
	group  string
	topic  string
	link   *delayLink
	obs    *handoverObserver
	admin  *kazoo.Consumergroup // resets, and learning new members' ids
	ledger *soakLedger
	origin time.Time
	bound  time.Duration

	resetsRandom, resetsOnCommit, lostRandom, lostOnClaim atomic.Int64
	claimLoseFor                                          atomic.Int64 // the aimed mute's length, drawn per cycle
	claimMuted                                            chan string  // the member whose claim's reply an aimed fault lost

	faults map[string]bool // the kinds of fault injected

	mu         sync.Mutex
	members    []*soakMember
	everIDs    map[string]bool
	cycle      int
	cycleStart map[int]time.Time
	events     map[int][]string
	pending    []chan struct{} // faults in progress
	claimErrs  []string
	conflicts  []string // *consumergroup.OffsetConflictError: nothing here writes offsets unfenced
	otherErrs  []string
	closeErrs  []string
}

func runHandoverSoak(t *testing.T, targetHandovers int, maxCycles time.Duration) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ZKGROUP_SOAK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ZKGROUP_SOAK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (ZKGROUP_SOAK_SEED=%d replays the soak's choices)", seed, seed)
	faults := map[string]bool{"reset": true, "aimed-reset": true, "lost": true, "aimed-lost": true}
	if s := os.Getenv("ZKGROUP_SOAK_FAULTS"); s != "" {
		want := map[string]bool{}
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); !faults[f] {
				t.Fatalf("ZKGROUP_SOAK_FAULTS=%q: %q is none of reset, aimed-reset, lost, aimed-lost", s, f)
			}
			want[f] = true
		}
		faults = want
		t.Logf("faults injected: %s", s)
	}

	r := &soakRun{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		group: testenv.UniqueName("soak"), topic: newTopic(t, soakPartitions),
		ledger: newSoakLedger(), origin: time.Now(), faults: faults, claimMuted: make(chan string, 1),
		everIDs: map[string]bool{}, cycleStart: map[int]time.Time{0: time.Now()}, events: map[int][]string{},
	}
	link, err := newDelayLink(testenv.ZKAddr(), soakLinkDelay)
	if err != nil {
		t.Fatal(err)
	}
	r.link = link
	t.Cleanup(func() { _ = link.Close() })
	t.Cleanup(r.closeAll) // runs before the link's close

	zkc := kazoo.NewConfig()
	zkc.Timeout = soakSession
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), zkc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	r.admin = kz.Consumergroup(r.group)
	r.bound = max(soakSession, kz.SessionTimeout()) + time.Second

	r.obs = newHandoverObserver(t, r.group, r.topic, soakPartitions)
	r.obs.setTriggers(r.resetOnCommit, r.loseOnClaim, func(id string) bool { return r.memberByID(id) != nil })

	prod := startProducer(t, r.topic, soakBatch, soakPeriod, 1<<40)

	for range soakMinMembers {
		r.startMember()
		if ok, why, _ := r.awaitConverged(r.bound); !ok {
			t.Fatalf("the group did not converge after its first members joined: %s", why)
		}
	}

	cycleBudget := soakProcessing + soakSession + time.Second + 3*time.Second // Claim.Budget + 3 s
	start := time.Now()
	base := r.obs.handoverCount() // the first members' joins are not the soak's
	stuck := ""
	for c := 1; r.obs.handoverCount()-base < targetHandovers && time.Since(start) < maxCycles; c++ {
		if ok, why := r.runCycle(c, cycleBudget); !ok {
			stuck = fmt.Sprintf("cycle %d: not converged %v after its faults: %s", c, cycleBudget, why)
			t.Logf("%s; stopping the soak", stuck)
			break
		}
		if c%10 == 0 {
			t.Logf("after cycle %d: %d hand-overs in %v", c, r.obs.handoverCount()-base, time.Since(start).Round(time.Second))
		}
	}
	cycles := r.cycleNo()

	// The end: the group must settle within the bound.
	r.obs.disarm()
	r.awaitFaults()
	endOK, endWhy, _ := r.awaitConverged(r.bound)

	// Every produced message delivered at least once.
	produced, perr := prod.stop()
	var missing int
	var firstMissing []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		missing, firstMissing = r.ledger.missing(produced)
		if missing == 0 || time.Now().After(deadline) || stuck != "" || !endOK {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	owners := r.obs.owners()
	unowned, gaps, handovers, readErrs, lastReadErr := r.obs.results() // before the members' close, which is not the soak's
	handovers -= base
	r.closeAll()
	r.obs.close()

	// Report.
	maxU, overU := worstGap(unowned, r.bound)
	maxG, overG := worstGap(gaps, r.bound)
	deliveries, distinct, dups := r.ledger.figures()
	var sent int64
	for _, n := range produced {
		sent += n
	}
	r.mu.Lock()
	claimErrs, conflicts, otherErrs, closeErrs := slices.Clone(r.claimErrs), slices.Clone(r.conflicts), slices.Clone(r.otherErrs), slices.Clone(r.closeErrs)
	r.mu.Unlock()

	t.Logf("bound: session timeout %v + 1 s = %v (drains are instant: every message is marked when delivered)", r.bound-time.Second, r.bound)
	t.Logf("unowned intervals: %d, %d over the bound; longest %s", len(unowned), len(overU), r.describe(maxU))
	t.Logf("hand-over gaps (not owned by its assignee): %d, %d over the bound; longest %s", len(gaps), len(overG), r.describe(maxG))
	for i, g := range append(overU, overG...) {
		if i == 10 {
			t.Logf("... %d more over the bound", len(overU)+len(overG)-i)
			break
		}
		t.Logf("over the bound: %s", r.describe(&g))
	}
	shown := map[int]bool{}
	for _, g := range []*ownershipGap{maxU, maxG} {
		if g != nil && !shown[g.cycle] {
			shown[g.cycle] = true
			t.Logf("cycle %d's events: %s", g.cycle, strings.Join(r.cycleEvents(g.cycle), "; "))
		}
	}
	if len(claimErrs) > 0 {
		t.Logf("%d claim errors (each logged when reported); the first: %s", len(claimErrs), claimErrs[0])
	}
	if len(otherErrs) > 0 {
		kinds, first := map[string]int{}, map[string]string{}
		for _, e := range otherErrs {
			k := errKind(e)
			if kinds[k]++; kinds[k] == 1 {
				first[k] = e
			}
		}
		byCount := slices.SortedFunc(maps.Keys(kinds), func(a, b string) int { return kinds[b] - kinds[a] })
		t.Logf("%d other errors reported, of %d kinds:", len(otherErrs), len(kinds))
		for _, k := range byCount {
			t.Logf("  %5d x %s\n          first: %s", kinds[k], k, first[k])
		}
	}
	if len(conflicts) > 0 {
		// Every writer of offsets here is fenced (commits by the claim,
		// resets by the epoch), so a conflict is not someone else's write.
		t.Logf("warning: %d offset conflicts reported, though nothing here writes offsets unfenced; the first: %s",
			len(conflicts), conflicts[0])
	}
	if len(closeErrs) > 0 {
		t.Logf("%d Close errors: %s", len(closeErrs), strings.Join(firstN(closeErrs, 5), " | "))
	}
	if readErrs > 0 {
		t.Logf("observer: %d failed reads, the last: %v", readErrs, lastReadErr)
	}
	summary := fmt.Sprintf("hand-over soak: seed %d, %d cycles, %d hand-overs, %d resets (%d random, %d aimed at a release), "+
		"%d lost-reply faults (%d random, %d aimed at a claim); max unowned %v, max hand-over gap %v, bound %v, %d over the bound; "+
		"%d claim errors, %d offset conflicts, %d other errors; %d produced, %d deliveries, %d distinct, %d duplicates, %d lost",
		seed, cycles, handovers, r.resetsRandom.Load()+r.resetsOnCommit.Load(), r.resetsRandom.Load(), r.resetsOnCommit.Load(),
		r.lostRandom.Load()+r.lostOnClaim.Load(), r.lostRandom.Load(), r.lostOnClaim.Load(),
		gapLen(maxU).Round(time.Millisecond), gapLen(maxG).Round(time.Millisecond), r.bound, len(overU)+len(overG),
		len(claimErrs), len(conflicts), len(otherErrs)-len(conflicts), sent, deliveries, distinct, dups, missing)
	t.Log(summary)

	if stuck != "" {
		t.Errorf("the group got stuck: %s", stuck)
	}
	if !endOK {
		t.Errorf("at the end, not every partition owned by its live assignee within %v: %s (owners %v)", r.bound, endWhy, shortAll(owners))
	}
	if n := len(overU); n > 0 {
		t.Errorf("%d unowned intervals over the bound %v; the longest %s", n, r.bound, r.describe(maxU))
	}
	if n := len(overG); n > 0 {
		t.Errorf("%d hand-over gaps over the bound %v; the longest %s", n, r.bound, r.describe(maxG))
	}
	if n := len(claimErrs); n > 0 {
		t.Errorf("%d claims failed for their whole budget; the first: %s", n, claimErrs[0])
	}
	if perr != nil {
		t.Errorf("producer: %v", perr)
	}
	if missing > 0 {
		why := ""
		if stuck != "" || !endOK {
			why = " (not waited for: the group was stuck)"
		}
		t.Errorf("%d of %d produced messages never delivered%s (first: %v)", missing, sent, why, firstMissing)
	}
	if stuck == "" && handovers < targetHandovers/2 {
		t.Errorf("only %d hand-overs in %v (target %d): the soak did not exercise hand-overs", handovers, maxCycles, targetHandovers)
	}
	if resets, lost := r.resetsRandom.Load()+r.resetsOnCommit.Load(), r.lostRandom.Load()+r.lostOnClaim.Load(); stuck == "" &&
		((resets == 0 && (faults["reset"] || faults["aimed-reset"])) || (lost == 0 && (faults["lost"] || faults["aimed-lost"]))) {
		t.Errorf("%d resets and %d lost-reply faults injected: the soak did not exercise its faults", resets, lost)
	}
}

// config is every member's configuration.
func (r *soakRun) config() *consumergroup.Config {
	cfg := testConfig()
	cfg.Zookeeper.Timeout = soakSession
	cfg.Offsets.ProcessingTimeout = soakProcessing
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Claim.Budget = soakProcessing + soakSession + time.Second
	cfg.Claim.RetryCooldown = time.Second
	return cfg
}

func (r *soakRun) cycleNo() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cycle
}

// note records an event of the current cycle, timed from its start.
func (r *soakRun) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cycle
	r.events[c] = append(r.events[c], fmt.Sprintf("+%v %s", time.Since(r.cycleStart[c]).Round(time.Millisecond), fmt.Sprintf(format, args...)))
}

func (r *soakRun) cycleEvents(c int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events[c])
}

func (r *soakRun) rel(at time.Time) string {
	return fmt.Sprintf("+%v", at.Sub(r.origin).Round(time.Millisecond))
}

func (r *soakRun) describe(g *ownershipGap) string {
	if g == nil {
		return "none"
	}
	open := ""
	if g.open {
		open = ", still open"
	}
	return fmt.Sprintf("%v (partition %d, cycle %d, from %s%s: %s)",
		g.length().Round(time.Millisecond), g.partition, g.cycle, r.rel(g.from), open, g.detail)
}

func worstGap(gs []ownershipGap, bound time.Duration) (worst *ownershipGap, over []ownershipGap) {
	for i := range gs {
		if worst == nil || gs[i].length() > worst.length() {
			worst = &gs[i]
		}
		if gs[i].length() > bound {
			over = append(over, gs[i])
		}
	}
	return worst, over
}

func gapLen(g *ownershipGap) time.Duration {
	if g == nil {
		return 0
	}
	return g.length()
}

// startMember joins a fresh member through a proxy of its own and starts
// reading it; it returns once the member is registered.
func (r *soakRun) startMember() *soakMember {
	t := r.t
	proxy, err := tcpproxy.New(r.link.Addr())
	if err != nil {
		t.Fatal(err)
	}
	// The proxy's address twice: go-zookeeper then reconnects at once after
	// a dropped connection, as a client of an ensemble does (with a single
	// address it waits a second before every reconnect, and a claim retried
	// meanwhile is sent as soon as it reconnects, before anything else).
	cg, err := consumergroup.JoinConsumerGroup(r.group, []string{r.topic}, []string{proxy.Addr(), proxy.Addr()}, r.config())
	if err != nil {
		_ = proxy.Close()
		t.Fatalf("join: %v", err)
	}
	m := &soakMember{proxy: proxy, cg: cg}
	m.done = r.read(m)
	r.mu.Lock()
	r.members = append(r.members, m) // closed by closeAll if the test ends early
	r.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for m.id == "" {
		if time.Now().After(deadline) {
			t.Fatalf("a member joined but no new registration appeared")
		}
		list, err := r.admin.Instances()
		if err == nil {
			var fresh []string
			r.mu.Lock()
			for _, i := range list {
				if !r.everIDs[i.ID] {
					fresh = append(fresh, i.ID)
				}
			}
			if len(fresh) == 1 {
				m.id = fresh[0]
				r.everIDs[m.id] = true
			}
			r.mu.Unlock()
		}
		if m.id == "" {
			time.Sleep(10 * time.Millisecond)
		}
	}
	r.note("joined %s", short(m.id))
	return m
}

// stopMember closes m (it leaves the live set at once).
func (r *soakRun) stopMember(m *soakMember) {
	r.mu.Lock()
	r.members = slices.DeleteFunc(r.members, func(x *soakMember) bool { return x == m })
	r.mu.Unlock()
	r.note("closing %s", short(m.id))
	if err := m.cg.Close(); err != nil && !errors.Is(err, consumergroup.AlreadyClosing) {
		r.mu.Lock()
		r.closeErrs = append(r.closeErrs, fmt.Sprintf("%s (cycle %d): %v", short(m.id), r.cycle, err))
		r.mu.Unlock()
	}
	<-m.done
	_ = m.proxy.Close()
	r.note("closed %s", short(m.id))
}

// closeAll closes every member still live.
func (r *soakRun) closeAll() {
	r.mu.Lock()
	ms := slices.Clone(r.members)
	r.mu.Unlock()
	for _, m := range ms {
		r.stopMember(m)
	}
	r.awaitFaults()
}

func (r *soakRun) liveIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, m := range r.members {
		if m.id != "" {
			ids = append(ids, m.id)
		}
	}
	return ids
}

func (r *soakRun) memberByID(id string) *soakMember {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.members {
		if m.id == id {
			return m
		}
	}
	return nil
}

// read delivers m's messages to the ledger, marking each at once, and
// sorts its errors, until Close closes both channels.
func (r *soakRun) read(m *soakMember) <-chan struct{} {
	return drainGroup(m.cg, func(msg *sarama.ConsumerMessage) {
		r.ledger.add(msg.Partition, msg.Offset)
		_ = m.cg.CommitUpto(msg)
	}, func(err error) { r.groupError(m, err) })
}

func (r *soakRun) groupError(m *soakMember, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	what := fmt.Sprintf("%s %s (cycle %d): %v", r.rel(time.Now()), short(m.id), r.cycle, err)
	var ce *claim.Error
	if errors.As(err, &ce) {
		r.claimErrs = append(r.claimErrs, what)
		r.t.Logf("claim error: %s", what)
		return
	}
	var conflict *consumergroup.OffsetConflictError
	if errors.As(err, &conflict) {
		r.conflicts = append(r.conflicts, what)
		r.t.Logf("offset conflict: %s", what)
	}
	r.otherErrs = append(r.otherErrs, what)
	if len(r.otherErrs) <= 20 {
		r.t.Logf("error: %s", what)
	}
}

// goFault runs f in the background as a fault of the current cycle.
func (r *soakRun) goFault(f func()) {
	done := make(chan struct{})
	r.mu.Lock()
	r.pending = append(r.pending, done)
	r.mu.Unlock()
	go func() {
		defer close(done)
		f()
	}()
}

// awaitFaults waits for every fault started so far to end.
func (r *soakRun) awaitFaults() {
	for {
		r.mu.Lock()
		p := r.pending
		r.pending = nil
		r.mu.Unlock()
		if len(p) == 0 {
			return
		}
		for _, d := range p {
			<-d
		}
	}
}

// resetOnCommit is the observer's commit trigger: reset the partition to
// the offset its old owner just committed, before its release.
func (r *soakRun) resetOnCommit(p int32, offset int64, owner string) {
	err := r.admin.ResetOffset(r.topic, p, offset)
	r.resetsOnCommit.Add(1)
	r.note("reset %d to %d on %s's commit (err %v)", p, offset, short(owner), err)
}

// loseOnClaim is the observer's claim trigger: the member's claim of p
// was just applied; lose its reply (and every other) on the way.
func (r *soakRun) loseOnClaim(p int32, owner string) {
	m := r.memberByID(owner)
	if m == nil {
		return
	}
	d := time.Duration(r.claimLoseFor.Load())
	r.lostOnClaim.Add(1)
	r.goFault(func() { m.proxy.LoseReplies(d) })
	r.note("losing %s's replies for %v: its claim of %d was applied", short(m.id), d, p)
	select {
	case r.claimMuted <- m.id:
	default:
	}
}

// awaitConverged waits until the registered instances are the live members
// and every partition is owned by its assignee, for three reads in a row
// 20 ms apart, or until limit.
func (r *soakRun) awaitConverged(limit time.Duration) (bool, string, time.Duration) {
	start := time.Now()
	good := 0
	why := ""
	for {
		var ok bool
		ok, why = r.obs.converged(r.liveIDs())
		if ok {
			good++
			if good == 3 {
				return true, "", time.Since(start)
			}
		} else {
			good = 0
		}
		if time.Since(start) > limit {
			return false, why, time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runCycle changes the membership once, with the faults drawn for it, and
// waits for the group to converge (up to limit). It returns false and why
// when it did not.
func (r *soakRun) runCycle(c int, limit time.Duration) (bool, string) {
	rng := r.rng
	n := len(r.liveIDs())
	action := "replace"
	switch x := rng.Float64(); {
	case x < 0.4 && n < soakMaxMembers:
		action = "add"
	case x < 0.4 && n > soakMinMembers:
		action = "remove"
	}
	together := rng.IntN(2) == 0
	victim := rng.IntN(1 << 30)
	resetRandom, resetDelay := rng.Float64() < 0.35 && r.faults["reset"], time.Duration(rng.Int64N(int64(500*time.Millisecond)))
	resetAimed := rng.Float64() < 0.5 && r.faults["aimed-reset"]
	lostRandom, lostDelay := rng.Float64() < 0.35 && r.faults["lost"], time.Duration(rng.Int64N(int64(300*time.Millisecond)))
	lostFor := 50*time.Millisecond + time.Duration(rng.Int64N(int64(200*time.Millisecond)))
	lostPick := rng.IntN(1 << 30)
	lostAimed := rng.Float64() < 0.5 && r.faults["aimed-lost"]
	r.claimLoseFor.Store(int64(100*time.Millisecond + time.Duration(rng.Int64N(int64(200*time.Millisecond)))))
	pause := time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
	second := rng.IntN(1 << 30)

	select {
	case <-r.claimMuted: // from an earlier cycle
	default:
	}
	t0 := time.Now()
	r.mu.Lock()
	r.cycle = c
	r.cycleStart[c] = t0
	r.mu.Unlock()
	r.obs.arm(c, resetAimed, lostAimed)
	r.note("%s (together %v); aimed reset %v, aimed lost replies %v", action, together, resetAimed, lostAimed)

	if resetRandom {
		r.goFault(func() {
			time.Sleep(time.Until(t0.Add(resetDelay)))
			r.note("resetting every offset (%v after the change)", resetDelay)
			err := r.admin.ResetOffsets()
			r.resetsRandom.Add(1)
			r.note("reset every offset (err %v)", err)
		})
	}
	if lostRandom {
		r.goFault(func() {
			time.Sleep(time.Until(t0.Add(lostDelay)))
			r.mu.Lock()
			var m *soakMember
			if len(r.members) > 0 {
				m = r.members[lostPick%len(r.members)]
			}
			r.mu.Unlock()
			if m == nil {
				return
			}
			r.lostRandom.Add(1)
			r.note("losing %s's replies for %v (%v after the change)", short(m.id), lostFor, lostDelay)
			m.proxy.LoseReplies(lostFor)
		})
	}

	r.mu.Lock()
	var old *soakMember
	if len(r.members) > 0 {
		old = r.members[victim%len(r.members)]
	}
	r.mu.Unlock()
	switch action {
	case "add":
		r.startMember()
	case "remove":
		r.stopMember(old)
	case "replace":
		if together {
			done := make(chan struct{})
			go func() { defer close(done); r.stopMember(old) }()
			r.startMember()
			<-done
		} else {
			r.stopMember(old)
			r.startMember()
		}
	}

	if lostAimed {
		// While the member whose claim's reply was lost reconnects, the
		// membership changes again: the partition may move away before
		// the member tries its claim again.
		select {
		case muted := <-r.claimMuted:
			r.followUp(muted, second)
		case <-time.After(500 * time.Millisecond):
		}
	}

	ok, why, took := r.awaitConverged(limit)
	r.obs.disarm()
	r.awaitFaults()
	if ok { // once more: an aimed fault may have fired meanwhile
		ok, why, _ = r.awaitConverged(limit)
	}
	r.note("converged %v (after %v)", ok, took.Round(time.Millisecond))
	r.t.Logf("cycle %d: %s", c, strings.Join(r.cycleEvents(c), "; "))
	time.Sleep(pause)
	return ok, why
}

// followUp changes the membership once more, sparing member spare: it
// adds a member when there is room, or closes another one.
func (r *soakRun) followUp(spare string, pick int) {
	r.mu.Lock()
	var others []*soakMember
	for _, m := range r.members {
		if m.id != spare {
			others = append(others, m)
		}
	}
	n := len(r.members)
	r.mu.Unlock()
	r.note("follow-up while %s reconnects", short(spare))
	if n < soakMaxMembers || len(others) == 0 {
		r.startMember()
		return
	}
	r.stopMember(others[pick%len(others)])
}

var (
	errInstance = regexp.MustCompile(`vm:[0-9a-f-]+|[^ :/]+:[0-9a-f]{8}-[0-9a-f-]{27}`)
	errNames    = regexp.MustCompile(`\b(it|soak)-[0-9a-f]+`)
	errNumbers  = regexp.MustCompile(`0x[0-9a-f]+|[0-9]+(\.[0-9]+)?(ms|µs|s)?`)
)

// errKind is an error reported to the soak (as groupError records it)
// without its time, member, cycle, names and numbers: errors of one kind
// differ only in those.
func errKind(what string) string {
	if i := strings.Index(what, "): "); i >= 0 {
		what = what[i+3:]
	}
	what = errInstance.ReplaceAllString(what, "<id>")
	what = errNames.ReplaceAllString(what, "<$1>")
	return errNumbers.ReplaceAllString(what, "N")
}
