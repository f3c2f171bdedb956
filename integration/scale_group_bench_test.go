package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationScaleGroup runs a group of K instances on a topic of
// P partitions, all in this process, each with its own ZooKeeper session
// (its own JoinConsumerGroup) and Kafka client, while a producer writes a
// steady trickle (200 messages/s) to the topic. Steps: the K start; once
// stable and the topic's backlog is read, one more joins; once stable, one
// leaves (Close). For each step
// it reports the time from the action to a stable assignment, the
// ZooKeeper requests the group sent meanwhile, the offset commits among
// them (and the writes per moved partition), the partitions that changed
// owner, duplicates (messages delivered more than once: 0 for clean joins
// and leaves), and a breakdown from the library's records (ZKGROUP_SCALE_DUMP
// names a folder for all of them).
//
// Stable: an observer (its own ZooKeeper connection, not counted) sees an
// owner node for every partition, owned only by current members, each
// member holding P/K rounded down or up, and the same owners at the next
// look 100 ms later. ZooKeeper requests are counted by a proxy every
// instance connects through (testenv.ZKCounter): writes are transactions (a multi
// is one), commits come from the instances' zkgroup-commits counters.
//
// Cases are PxK; ZKGROUP_SCALE_CASES overrides the default
// "256x8,1024x8,1024x32"; up to 4096x64 run in one process (each instance
// with its own session and Kafka client). Run:
//
//	go test -run=NONE -bench=IntegrationScaleGroup -benchtime=1x -v ./integration/
//	ZKGROUP_SCALE_CASES=1024x32,4096x32,4096x64 go test -run=NONE -bench=IntegrationScaleGroup -benchtime=1x -timeout=30m -v ./integration/
func BenchmarkIntegrationScaleGroup(b *testing.B) {
	testenv.Integration(b)
	cases := "256x8,1024x8,1024x32"
	if v := os.Getenv("ZKGROUP_SCALE_CASES"); v != "" {
		cases = v
	}
	for _, c := range strings.Split(cases, ",") {
		ps, ks, _ := strings.Cut(c, "x")
		p, err1 := strconv.Atoi(ps)
		k, err2 := strconv.Atoi(ks)
		if err1 != nil || err2 != nil {
			b.Fatalf("bad case %q: want PxK", c)
		}
		b.Run(c, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runScaleGroup(b, int32(p), k)
			}
		})
	}
}

type scaleMember struct {
	cg   *consumergroup.ConsumerGroup
	reg  metrics.Registry
	done <-chan struct{}
}

func runScaleGroup(b *testing.B, partitions int32, k int) {
	topic := scaleTopic(b, partitions, handoffPerPartition)
	group := testenv.UniqueName("scale")
	counter := testenv.NewZKCounter(b, testenv.ZKAddr())
	obs := newOwnerView(b, group, topic, partitions)
	l := newLedger()

	// The topic's messages before the trickle adds to it.
	backlog := newestOffsets(b, topic)
	trickle := startProducerThroughFaults(b, topic, 20, 100*time.Millisecond, math.MaxInt) // 200 a second
	defer trickle.stop()

	var mu sync.Mutex
	var members, everyone []*scaleMember // the current ones; all that ever ran
	// The library's records, for each step's breakdown: the first K's, and
	// the joiner's.
	groupLog, joinerLog := newEventLog(), newEventLog()
	start := func(id int) *scaleMember {
		cfg := testConfig()
		cfg.MetricRegistry = metrics.NewRegistry()
		// Info and above: 64 instances' debug records (a few per fetch
		// round) piled up in the logs faster than the group worked.
		cfg.Logger = slog.New(infoOnly{groupLog})
		if id == k {
			cfg.Logger = slog.New(infoOnly{joinerLog})
		}
		cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{counter.Addr()}, cfg)
		if err != nil {
			b.Fatalf("join: %v", err)
		}
		m := &scaleMember{cg: cg, reg: cfg.MetricRegistry, done: readGroup(cg, id, l, 0, func(error) {})}
		mu.Lock()
		everyone = append(everyone, m)
		mu.Unlock()
		return m
	}
	commits := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		var n int64
		for _, m := range everyone {
			n += countOf(m.reg, "zkgroup-commits")
		}
		return n
	}
	step := func(name string, action func()) {
		before, beforeCommits, beforeDup := counter.Counts(), commits(), l.duplicates()
		owners0 := obs.snapshot()
		t0 := time.Now()
		action()
		stableAt, owners := obs.waitStable(b, 5*time.Minute)
		took := stableAt.Sub(t0)
		zkc := counter.Counts().Minus(before)
		moved := 0
		for p, o := range owners {
			if owners0[p] != o {
				moved++
			}
		}
		dup := l.duplicates() - beforeDup
		perMoved := math.NaN() // no partition moved: nothing to divide by
		if moved > 0 {
			perMoved = float64(zkc.Writes) / float64(moved)
		}
		b.Logf("%d partitions x %d instances, %s: stable after %v; moved %d; ZooKeeper writes %d (commits %d; %.1f per moved partition), reads %d, pings %d, other %d; duplicates %d",
			partitions, k, name, took.Round(time.Millisecond), moved, zkc.Writes, commits()-beforeCommits, perMoved, zkc.Reads, zkc.Pings, zkc.Other, dup)
		b.Logf("%s, from the action: %s", name, scaleBreakdown(t0, map[string]*eventLog{"first K": groupLog, "joiner": joinerLog}))
		if dir := os.Getenv("ZKGROUP_SCALE_DUMP"); dir != "" && name != "start" { // every record since the action, for a closer look
			for who, l := range map[string]*eventLog{"group": groupLog, "joiner": joinerLog} {
				file := fmt.Sprintf("%s/%s-%dx%d-%s-%s.log", dir, group, partitions, k, name, who)
				if err := os.WriteFile(file, []byte(strings.Join(l.dump(t0), "\n")), 0o644); err != nil {
					b.Logf("dump: %v", err)
				}
			}
		}
		b.ReportMetric(float64(took.Milliseconds()), name+"-stable-ms")
		b.ReportMetric(float64(zkc.Writes), name+"-zk-writes")
		if moved > 0 {
			b.ReportMetric(perMoved, name+"-zk-writes/moved")
		}
		b.ReportMetric(float64(zkc.Reads), name+"-zk-reads")
		b.ReportMetric(float64(dup), name+"-duplicates")
	}

	step("start", func() {
		var wg sync.WaitGroup
		for i := 0; i < k; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := start(i)
				mu.Lock()
				members = append(members, m)
				mu.Unlock()
			}()
		}
		wg.Wait()
	})
	// The group reads the topic's backlog from the start; on two cores,
	// 64 instances working through 400,000 messages starve the rebalance
	// under test. The join and the leave are timed once the backlog is
	// read, with only the trickle flowing.
	caughtUp := time.Now()
	waitFor(b, 10*time.Minute, "the group to read the backlog", func() bool {
		time.Sleep(500 * time.Millisecond) // missing holds the ledger's lock while it counts
		return l.missing(topic, backlog) == 0
	})
	b.Logf("%d partitions x %d instances: the backlog of %d messages read %v after the start was stable",
		partitions, k, sumOf(backlog), time.Since(caughtUp).Round(time.Millisecond))

	step("join", func() {
		m := start(k)
		mu.Lock()
		members = append(members, m)
		mu.Unlock()
	})
	step("leave", func() {
		mu.Lock()
		m := members[0]
		members = members[1:]
		mu.Unlock()
		closeGroup(b, m.cg)
		<-m.done
	})

	var wg sync.WaitGroup
	for _, m := range members {
		wg.Add(1)
		go func() { defer wg.Done(); closeGroup(b, m.cg); <-m.done }()
	}
	wg.Wait()
	// The group's nodes would grow ZooKeeper's tree for every later run.
	if err := zkClient(b).Consumergroup(group).Delete(); err != nil {
		b.Logf("delete group %s: %v", group, err)
	}
}

// infoOnly passes on the records of level Info and above.
type infoOnly struct{ slog.Handler }

func (h infoOnly) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h infoOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return infoOnly{h.Handler.WithAttrs(attrs)}
}

func (h infoOnly) WithGroup(name string) slog.Handler { return infoOnly{h.Handler.WithGroup(name)} }

func sumOf(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// scaleBreakdown sums up the records of each log since t0: its members'
// first and last "rebalanced", and the first and last of their releases
// and claims.
func scaleBreakdown(t0 time.Time, logs map[string]*eventLog) string {
	var parts []string
	span := func(ts map[int32]time.Time) string {
		if len(ts) == 0 {
			return "none"
		}
		var lo, hi time.Duration = math.MaxInt64, 0
		for _, t := range ts {
			lo, hi = min(lo, t.Sub(t0)), max(hi, t.Sub(t0))
		}
		return fmt.Sprintf("%d, %v..%v", len(ts), lo.Round(time.Millisecond), hi.Round(time.Millisecond))
	}
	for _, name := range []string{"first K", "joiner"} {
		l := logs[name]
		reb := "none"
		if at, ok := l.first("rebalanced", t0); ok {
			reb = at.Sub(t0).Round(time.Millisecond).String()
		}
		parts = append(parts, fmt.Sprintf("%s: first rebalanced %s (%d in all), released %s, claimed %s",
			name, reb, l.count("rebalanced", t0), span(l.byPartition("released", t0)), span(l.byPartition("claimed", t0))))
	}
	return strings.Join(parts, "; ")
}

// ownerView reads a group's owner nodes of one topic over its own
// ZooKeeper connection.
type ownerView struct {
	conn       *zk.Conn
	base       string // the topic's owner nodes
	ids        string // the group's registrations
	partitions int32
}

// members returns the registered instances.
func (v *ownerView) members() map[string]bool {
	children, _, _ := v.conn.Children(v.ids)
	out := make(map[string]bool, len(children))
	for _, c := range children {
		out[c] = true
	}
	return out
}

func newOwnerView(t testing.TB, group, topic string, partitions int32) *ownerView {
	conn, _, err := zk.Connect(testenv.ZKServers(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return &ownerView{conn: conn, base: "/consumers/" + group + "/owners/" + topic, ids: "/consumers/" + group + "/ids", partitions: partitions}
}

// snapshot returns each partition's owner ("" when it has none).
func (v *ownerView) snapshot() map[int32]string {
	out := make(map[int32]string, v.partitions)
	children, _, err := v.conn.Children(v.base)
	if err != nil || len(children) == 0 {
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// Many reads in flight: ZooKeeper pipelines them, and a look at 4,096
	// owner nodes 64 at a time took longer than the rebalances it timed.
	sem := make(chan struct{}, 512)
	for _, c := range children {
		p, err := strconv.Atoi(c)
		if err != nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			data, _, err := v.conn.Get(v.base + "/" + c)
			if err == nil {
				mu.Lock()
				out[int32(p)] = string(data)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// balanced reports whether owners covers every partition, with only
// members, each holding its share rounded down or up (with more members
// than partitions, at most one each).
func (v *ownerView) balanced(owners map[int32]string, members map[string]bool) bool {
	if len(members) == 0 || int32(len(owners)) != v.partitions {
		return false
	}
	held := make(map[string]int)
	for _, o := range owners {
		if !members[o] {
			return false
		}
		held[o]++
	}
	lo := int(v.partitions) / len(members)
	for m := range members {
		if n := held[m]; n < lo || n > lo+1 {
			return false
		}
	}
	return true
}

// waitStable waits until two looks 100 ms apart see the same balanced
// owners, and returns when the first of them was taken.
func (v *ownerView) waitStable(t testing.TB, timeout time.Duration) (time.Time, map[int32]string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var prev map[int32]string
	var prevAt time.Time
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no stable assignment after %v", timeout)
		}
		at := time.Now()
		cur := v.snapshot()
		if v.balanced(cur, v.members()) {
			if prev != nil && sameOwners(prev, cur) {
				return prevAt, cur
			}
			prev, prevAt = cur, at
			time.Sleep(100 * time.Millisecond)
			continue
		}
		prev = nil
		time.Sleep(10 * time.Millisecond)
	}
}

func sameOwners(a, b map[int32]string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, o := range a {
		if b[p] != o {
			return false
		}
	}
	return true
}
