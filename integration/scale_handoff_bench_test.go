package integration

import (
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationScaleHandoff measures the handoff when a second
// instance joins a group whose one instance owns every partition of a topic
// (64 and 1,024 partitions, every partition with a backlog the first
// instance works through at 1 ms a message, marking each). From the
// JoinConsumerGroup call it times until the joiner has received its last
// first message: every partition it gains has delivered at least one.
// Each size runs ZKGROUP_SCALE_RUNS times (default 5), each under a new
// group; it reports the worst (handoff-worst-ms) and the median, and logs a
// breakdown of every run, from the library's own log records (see
// handoffBreakdown; ZKGROUP_SCALE_COUNT=1 counts the ZooKeeper requests
// (=kinds also logs them by opcode and node kind)
// too). The topics zkgroup.scale.<n> are created on first use and kept.
// Run:
//
//	go test -run=NONE -bench=IntegrationScaleHandoff -benchtime=1x -v ./integration/
func BenchmarkIntegrationScaleHandoff(b *testing.B) {
	testenv.Integration(b)
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("ZKGROUP_SCALE_RUNS")); err == nil && v > 0 {
		runs = v
	}
	for _, n := range []int32{64, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			topic := scaleTopic(b, n, handoffPerPartition)
			for i := 0; i < b.N; i++ {
				var took []time.Duration
				for r := 0; r < runs; r++ {
					h := runHandoff(b, topic, n)
					b.Logf("%d partitions, run %d: %s", n, r+1, h)
					took = append(took, h.total)
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "handoff-worst-ms")
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "handoff-median-ms")
			}
		})
	}
}

// handoffPerPartition is how many messages each partition of the handoff
// topics holds (at least; the topic is never written during a run).
const handoffPerPartition = 100

// handoffBreakdown is one handoff's timeline, from the join call (t0):
// the library's records of both instances placed beside the joiner's first
// messages.
type handoffBreakdown struct {
	moved   int
	drained int           // gained partitions without a message left: not waited for
	total   time.Duration // join call -> the joiner's last first message

	joinCall       time.Duration // JoinConsumerGroup returned (session, Kafka client, registration)
	joinerAssigned time.Duration // the joiner's first "rebalanced" (view read, assignment, workers started)
	ownerAssigned  time.Duration // the owner's "rebalanced" (its watch fired, view read, workers stopped)
	lastRelease    time.Duration // the owner's last "released"

	// Per moved partition, median and worst: the owner's drain, final
	// commit and release (owner rebalanced -> released); the joiner's
	// claim after the release (released -> claimed); the offset read
	// (claimed -> first fetch sent); the first fetch and hand-over (first
	// fetch sent -> first message received).
	drain, claim, offsetRead, fetch phase
	// The path of the partition whose first message came last.
	lastPath string
	// ZooKeeper requests of both instances, join -> last first message
	// (a multi is one write); -1 unless counted (ZKGROUP_SCALE_COUNT).
	zkWrites, zkReads int64
}

type phase struct{ median, worst time.Duration }

func phaseOf(ds []time.Duration) phase {
	if len(ds) == 0 {
		return phase{}
	}
	slices.Sort(ds)
	return phase{ds[len(ds)/2], ds[len(ds)-1]}
}

func (p phase) String() string {
	return fmt.Sprintf("%v/%v", p.median.Round(100*time.Microsecond), p.worst.Round(100*time.Microsecond))
}

func (h handoffBreakdown) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	return fmt.Sprintf("moved %d (+%d read to the end by the owner), join->last first message %v | join call %v, joiner rebalanced %v, owner rebalanced %v, last release %v"+
		" | per partition median/worst: owner drain+commit+release %v, release->claim %v, claim->first fetch (offset read) %v, first fetch->message %v"+
		" | last partition: %s | ZooKeeper writes %d, reads %d",
		h.moved, h.drained, r(h.total), r(h.joinCall), r(h.joinerAssigned), r(h.ownerAssigned), r(h.lastRelease),
		h.drain, h.claim, h.offsetRead, h.fetch, h.lastPath, h.zkWrites, h.zkReads)
}

// runHandoff runs one handoff under a new group and returns its breakdown.
func runHandoff(b *testing.B, topic string, n int32) handoffBreakdown {
	const perPartition = handoffPerPartition
	b.Helper()
	group := testenv.UniqueName("handoff")
	ownerLog, joinerLog := newEventLog(), newEventLog()

	// With ZKGROUP_SCALE_COUNT set, both instances reach ZooKeeper through
	// a proxy that counts their requests (one hop more for each).
	zkAddr := testenv.ZKAddr()
	var counter *testenv.ZKCounter
	if os.Getenv("ZKGROUP_SCALE_COUNT") != "" {
		counter = testenv.NewZKCounter(b, zkAddr)
		zkAddr = counter.Addr()
	}
	cfg := testConfig()
	cfg.Logger = ownerLog.logger()
	owner := joinVia(b, zkAddr, group, []string{topic}, cfg)
	ownerFirst := newFirstSeen()
	ownerDone := readFirsts(owner, ownerFirst, time.Millisecond)
	waitFor(b, 120*time.Second, "the owner to deliver from every partition", func() bool { return ownerFirst.count() == int(n) })

	var before testenv.ZKCounts
	var beforeKinds map[string]int64
	if counter != nil {
		before, beforeKinds = counter.Counts(), counter.ByKind()
	}
	t0 := time.Now()
	cfg = testConfig()
	cfg.Logger = joinerLog.logger()
	joiner := joinVia(b, zkAddr, group, []string{topic}, cfg)
	joined := time.Now()
	joinerFirst := newFirstSeen()
	joinerDone := readFirsts(joiner, joinerFirst, 0)
	// A partition the owner read to its end before the handoff has
	// nothing for the joiner: its first fetch starts at the end of the log.
	// It is left out (counted in drained); every other gained partition
	// must deliver.
	// It reads only the records added since it last looked: rescanning
	// them all every few milliseconds held the log's lock, which every
	// logging goroutine of both instances takes, for longer and longer.
	firstFetches := make(map[int32]int64) // partition -> its first fetch's offset
	scanned := 0
	expect := func() (want, drained int) {
		scanned = joinerLog.scan(scanned, func(e scaleEvent) {
			if e.msg != "first fetch" || e.at.Before(t0) {
				return
			}
			if _, ok := firstFetches[e.partition]; !ok {
				firstFetches[e.partition] = e.offset
			}
		})
		for _, o := range firstFetches {
			if o >= perPartition {
				drained++
			}
		}
		return int(n/2) - drained, drained
	}
	deadline := time.Now().Add(60 * time.Second)
	for want, _ := expect(); joinerFirst.count() < want; want, _ = expect() {
		if time.Now().After(deadline) {
			seen := joinerFirst.snapshot()
			claimed := joinerLog.byPartition("claimed", t0)
			fetched := joinerLog.byPartition("first fetch", t0)
			var stuck []string
			for p, at := range claimed {
				if _, ok := seen[p]; !ok {
					stuck = append(stuck, fmt.Sprintf("p%d claimed %v fetch %v", p, at.Sub(t0), fetched[p].Sub(t0)))
				}
			}
			var notes []string
			for _, e := range joinerLog.dump(t0) {
				for _, s := range stuck {
					if p, _, _ := strings.Cut(s, " "); strings.Contains(e, "/"+p[1:]+" ") || strings.Contains(e, "/-1") {
						notes = append(notes, e)
						break
					}
				}
			}
			if dir := os.Getenv("ZKGROUP_SCALE_DUMP"); dir != "" {
				if f, err := os.Create(dir + "/goroutines-" + group + ".txt"); err == nil {
					_ = pprof.Lookup("goroutine").WriteTo(f, 2)
					_ = f.Close()
				}
			}
			b.Fatalf("after 60s the joiner delivered from %d partitions, claimed %d; claimed without a message: %v; its records:\n%s",
				len(seen), len(claimed), stuck, strings.Join(notes, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	firsts := joinerFirst.snapshot()
	_, drained := expect()
	zkc := testenv.ZKCounts{Writes: -1, Reads: -1}
	if counter != nil {
		zkc = counter.Counts().Minus(before)
		if os.Getenv("ZKGROUP_SCALE_COUNT") == "kinds" {
			after := counter.ByKind()
			var kinds []string
			for k, v := range after {
				if d := v - beforeKinds[k]; d > 0 {
					kinds = append(kinds, fmt.Sprintf("%s %d", k, d))
				}
			}
			sort.Strings(kinds)
			b.Logf("ZooKeeper requests during the handoff, by opcode and node: %s", strings.Join(kinds, ", "))
		}
	}

	var wg sync.WaitGroup
	for _, g := range []*consumergroup.ConsumerGroup{owner, joiner} {
		wg.Add(1)
		go func() { defer wg.Done(); closeGroup(b, g) }()
	}
	wg.Wait()
	<-ownerDone
	<-joinerDone
	// Each run's group leaves thousands of nodes (owners, offsets,
	// epochs): kept, they grow ZooKeeper's tree and its snapshots run
	// after run, and every later run measures a slower server.
	if err := zkClient(b).Consumergroup(group).Delete(); err != nil {
		b.Logf("delete group %s: %v", group, err)
	}

	if dir := os.Getenv("ZKGROUP_SCALE_DUMP"); dir != "" { // every record of both, for a closer look
		for name, l := range map[string]*eventLog{"owner": ownerLog, "joiner": joinerLog} {
			file := fmt.Sprintf("%s/%s-%d-%s.log", dir, group, n, name)
			if err := os.WriteFile(file, []byte(strings.Join(l.dump(t0), "\n")), 0o644); err != nil {
				b.Logf("dump: %v", err)
			}
		}
	}
	h := handoffBreakdown{moved: len(firsts), drained: drained, joinCall: joined.Sub(t0), zkWrites: zkc.Writes, zkReads: zkc.Reads}
	var last int32
	for p, at := range firsts {
		if d := at.Sub(t0); d > h.total {
			h.total, last = d, p
		}
	}
	since := func(t time.Time, ok bool) time.Duration {
		if !ok {
			return -1
		}
		return t.Sub(t0)
	}
	h.joinerAssigned = since(joinerLog.first("rebalanced", t0))
	ownerRebalanced, ok := ownerLog.first("rebalanced", t0)
	h.ownerAssigned = since(ownerRebalanced, ok)
	released := ownerLog.byPartition("released", t0)
	claimed := joinerLog.byPartition("claimed", t0)
	fetched := joinerLog.byPartition("first fetch", t0)
	var drain, claim, offsetRead, fetch []time.Duration
	for p, first := range firsts {
		rel, cl, fe := released[p], claimed[p], fetched[p]
		if rel.IsZero() || cl.IsZero() {
			b.Errorf("partition %d: no release by the owner or no claim by the joiner after the join", p)
			continue
		}
		if d := rel.Sub(t0); d > h.lastRelease {
			h.lastRelease = d
		}
		drain = append(drain, rel.Sub(ownerRebalanced))
		claim = append(claim, cl.Sub(rel))
		if !fe.IsZero() {
			offsetRead = append(offsetRead, fe.Sub(cl))
			fetch = append(fetch, first.Sub(fe))
		}
		if p == last {
			h.lastPath = fmt.Sprintf("p%d released %v, claimed %v, first fetch %v, first message %v", p,
				rel.Sub(t0).Round(100*time.Microsecond), cl.Sub(t0).Round(100*time.Microsecond),
				fe.Sub(t0).Round(100*time.Microsecond), first.Sub(t0).Round(100*time.Microsecond))
		}
	}
	h.drain, h.claim, h.offsetRead, h.fetch = phaseOf(drain), phaseOf(claim), phaseOf(offsetRead), phaseOf(fetch)
	return h
}

// firstSeen records when each partition first delivered a message.
type firstSeen struct {
	mu    sync.Mutex
	first map[int32]time.Time
}

func newFirstSeen() *firstSeen { return &firstSeen{first: make(map[int32]time.Time)} }

func (f *firstSeen) saw(m *sarama.ConsumerMessage, at time.Time) {
	f.mu.Lock()
	if _, ok := f.first[m.Partition]; !ok {
		f.first[m.Partition] = at
	}
	f.mu.Unlock()
}

func (f *firstSeen) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.first)
}

func (f *firstSeen) snapshot() map[int32]time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int32]time.Time, len(f.first))
	for p, t := range f.first {
		out[p] = t
	}
	return out
}

// readFirsts reads cg's messages until Close, noting each partition's first
// message in f, holding each for work and marking it.
func readFirsts(cg *consumergroup.ConsumerGroup, f *firstSeen, work time.Duration) (done <-chan struct{}) {
	return drainGroup(cg, func(m *sarama.ConsumerMessage) {
		f.saw(m, time.Now())
		if work > 0 {
			time.Sleep(work)
		}
		_ = cg.CommitUpto(m)
	}, func(err error) { errorLog.Printf("group error: %v", err) })
}

// errorLog prints the groups' errors of the scale benchmarks.
var errorLog = log.New(os.Stderr, "", log.Ltime|log.Lmicroseconds)
