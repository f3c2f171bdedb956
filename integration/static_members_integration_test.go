package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// Static members (Consumer.Group.InstanceId): docs/static-members.md.

// staticConfig is testConfig for the static member id with grace window
// grace, dividing partitions by id.
func staticConfig(id string, grace time.Duration) *consumergroup.Config {
	cfg := testConfig()
	cfg.Consumer.Group.InstanceId = id
	cfg.Static.GraceWindow = grace
	cfg.Assignment.Strategy = consumergroup.StrategyRangeByID
	return cfg
}

// staticOwners is who owns each of the 12 partitions once s0, s1 and s2
// have joined: range-by-id over the sorted ids.
func staticOwner(p int32) int { return int(p) / 4 }

// waitOwners waits until each partition of topic is owned by
// "s<owner(p)>".
func waitOwners(t *testing.T, kg *kazoo.Consumergroup, topic string, n int32, owner func(int32) int) {
	t.Helper()
	waitFor(t, 60*time.Second, "every partition owned by its static member", func() bool {
		for p := range n {
			o, err := kg.PartitionOwner(topic, p)
			if err != nil || o == nil || o.ID != fmt.Sprintf("s%d", owner(p)) {
				return false
			}
		}
		return true
	})
}

// A rolling restart of three static members, each closed, away 2 s and
// back, while a producer runs: every message of every partition is
// delivered by the partition's original owner, none is lost, none twice.
func TestIntegrationStaticRollingRestart(t *testing.T) {
	testenv.Integration(t)
	const parts = 12
	topic := newTopic(t, parts)
	group := testenv.UniqueName("static-roll")
	kg := zkClient(t).Consumergroup(group)
	l := newLedger()
	onError := func(id int) func(error) {
		return func(err error) { t.Logf("s%d: error: %v", id, err) }
	}
	members := make([]*consumergroup.ConsumerGroup, 3)
	done := make([]<-chan struct{}, 3)
	for i := range members {
		members[i] = join(t, group, []string{topic}, staticConfig(fmt.Sprintf("s%d", i), 20*time.Second))
		done[i] = readGroup(members[i], i, l, 0, onError(i))
	}
	waitOwners(t, kg, topic, parts, staticOwner)

	producer := startProducer(t, topic, parts, 20*time.Millisecond, 1<<30)
	time.Sleep(time.Second)
	for i := range members {
		closeGroup(t, members[i])
		<-done[i]
		time.Sleep(2 * time.Second)
		members[i] = join(t, group, []string{topic}, staticConfig(fmt.Sprintf("s%d", i), 20*time.Second))
		done[i] = readGroup(members[i], i, l, 0, onError(i))
		waitOwners(t, kg, topic, parts, staticOwner)
	}
	time.Sleep(time.Second)
	counts, err := producer.stop()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "every message delivered", func() bool { return l.missing(topic, counts) == 0 })
	for i := range members {
		closeGroup(t, members[i])
		<-done[i]
	}

	moved := make(map[int32]bool)
	for _, d := range l.snapshot() {
		if d.consumer != staticOwner(d.partition) {
			moved[d.partition] = true
		}
	}
	var sent int64
	for _, c := range counts {
		sent += c
	}
	t.Logf("%d messages over %d partitions; %d delivered twice", sent, parts, l.duplicates())
	if len(moved) > 0 {
		t.Errorf("partitions delivered by an instance other than their original owner: %v", moved)
	}
	if n := l.duplicates(); n > 0 {
		t.Errorf("%d messages delivered twice", n)
	}
}

// A static member that does not come back: its partitions wait for its
// grace window, then the others deliver them.
func TestIntegrationStaticMemberGone(t *testing.T) {
	testenv.Integration(t)
	const parts = 12
	const grace = 3 * time.Second
	topic := newTopic(t, parts)
	group := testenv.UniqueName("static-gone")
	kg := zkClient(t).Consumergroup(group)
	l := newLedger()
	members := make([]*consumergroup.ConsumerGroup, 3)
	done := make([]<-chan struct{}, 3)
	for i := range members {
		members[i] = join(t, group, []string{topic}, staticConfig(fmt.Sprintf("s%d", i), grace))
		done[i] = readGroup(members[i], i, l, 0, func(err error) { t.Logf("s%d: error: %v", i, err) })
	}
	waitOwners(t, kg, topic, parts, staticOwner)
	producer := startProducer(t, topic, parts, 20*time.Millisecond, 1<<30)
	defer producer.stop()

	left := time.Now()
	closeGroup(t, members[2])
	<-done[2]
	gone := []int32{8, 9, 10, 11}
	waitFor(t, grace+10*time.Second, "s2's partitions delivered by s0 and s1", func() bool {
		seen := make(map[int32]bool)
		for _, d := range l.snapshot() {
			if d.consumer != 2 && d.at.After(left) {
				seen[d.partition] = true
			}
		}
		for _, p := range gone {
			if !seen[p] {
				return false
			}
		}
		return true
	})
	t.Logf("s2's partitions delivered by others %s after it began to close (grace window %s)", time.Since(left).Round(100*time.Millisecond), grace)
	for _, d := range l.snapshot() {
		if d.consumer != 2 && d.partition >= 8 && d.at.Before(left.Add(grace)) {
			t.Errorf("s%d delivered %d/%d within s2's grace window (%s after it began to close)", d.consumer, d.partition, d.offset, d.at.Sub(left))
			break
		}
	}
	if ok, err := kg.StaticMembers(); err != nil || len(ok) != 2 {
		t.Errorf("reservations after s2's window: %v (%v), want s0 and s1's", ok, err)
	}
	for _, i := range []int{0, 1} {
		closeGroup(t, members[i])
		<-done[i]
	}
}

// A second live instance with a static member's id is refused with
// ErrFencedInstanceID, through either API, after waiting a session
// timeout for the id to be free; the first keeps its partitions.
func TestIntegrationStaticDuplicateRefused(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 4)
	group := testenv.UniqueName("static-dup")
	kg := zkClient(t).Consumergroup(group)
	l := newLedger()
	first := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	done := consume(t, 0, first, l)
	waitOwners(t, kg, topic, 4, func(int32) int { return 0 })

	cfg := staticConfig("s0", 10*time.Second)
	cfg.Zookeeper.Timeout = 2 * time.Second
	started := time.Now()
	second, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err == nil {
		closeGroup(t, second)
		t.Fatal("a second instance with the same InstanceId joined")
	}
	if !errors.Is(err, consumergroup.ErrFencedInstanceID) {
		t.Fatalf("JoinConsumerGroup = %v, want ErrFencedInstanceID", err)
	}
	t.Logf("refused after %s: %v", time.Since(started).Round(100*time.Millisecond), err)

	hg, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &ledgerHandler{id: 1, l: l}
	if err := hg.Consume(t.Context(), []string{topic}, h); !errors.Is(err, consumergroup.ErrFencedInstanceID) {
		t.Errorf("Consume = %v, want ErrFencedInstanceID", err)
	}
	_ = hg.Close()

	counts := produce(t, topic, 200)
	waitFor(t, 30*time.Second, "every message delivered by the first", func() bool { return l.missing(topic, counts) == 0 })
	for _, d := range l.snapshot() {
		if d.consumer != 0 {
			t.Fatalf("the refused instance delivered %d/%d", d.partition, d.offset)
		}
	}
	if n := l.duplicates(); n > 0 {
		t.Errorf("%d messages delivered twice", n)
	}
	closeGroup(t, first)
	<-done
}

// A static member restarted while its crashed predecessor's session still
// holds its id joins once that session ends.
func TestIntegrationStaticRestartAfterCrash(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 2)
	group := testenv.UniqueName("static-crash")
	crashed, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer crashed.Close()
	kg := crashed.Consumergroup(group)
	if err := kg.Create(); err != nil {
		t.Fatal(err)
	}
	if err := kg.StaticInstance("s0", 10*time.Second).Register([]string{topic}); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(time.Second, func() { _ = crashed.Close() }) // its session ends: the node goes

	cg := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	l := newLedger()
	done := consume(t, 0, cg, l)
	counts := produce(t, topic, 20)
	waitFor(t, 30*time.Second, "every message delivered", func() bool { return l.missing(topic, counts) == 0 })
	closeGroup(t, cg)
	<-done
}

// A static member whose session expired while it was cut off from
// ZooKeeper, and whose id another instance registered meanwhile, is
// fenced when it is back: Consume returns ErrFencedInstanceID, and the
// other instance consumes every partition.
func TestIntegrationStaticFencedAfterExpiry(t *testing.T) {
	testenv.Integration(t)
	const session = 3 * time.Second
	topic := newTopic(t, 4)
	group := testenv.UniqueName("static-fenced")
	kg := zkClient(t).Consumergroup(group)
	proxy, err := tcpproxy.New(testenv.ZKServers()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	cfgA := staticConfig("s0", 10*time.Second)
	cfgA.Zookeeper.Timeout = session
	a, err := consumergroup.NewConsumerGroup(group, []string{proxy.Addr()}, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	go func() {
		for err := range a.Errors() {
			t.Logf("A: error: %v", err)
		}
	}()
	l := newLedger()
	consumed := make(chan error, 1)
	go func() { consumed <- a.Consume(context.Background(), []string{topic}, &ledgerHandler{id: 0, l: l}) }()
	waitOwners(t, kg, topic, 4, func(int32) int { return 0 })

	proxy.Cut()
	waitFor(t, 3*session, "A's registration to expire", func() bool {
		ok, err := kg.Instance("s0").Registered()
		return err == nil && !ok
	})
	b := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	var lostMu sync.Mutex
	var lost []error // B's claims taken by A
	doneB := readGroup(b, 1, l, 0, func(err error) {
		t.Logf("B: error: %v", err)
		if errors.Is(err, kazoo.ErrClaimLost) {
			lostMu.Lock()
			lost = append(lost, err)
			lostMu.Unlock()
		}
	})
	proxy.Restore()

	select {
	case err := <-consumed:
		if !errors.Is(err, consumergroup.ErrFencedInstanceID) {
			t.Errorf("A's Consume = %v, want ErrFencedInstanceID", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("A's Consume did not return after A was fenced")
	}
	counts := produce(t, topic, 200)
	waitFor(t, 30*time.Second, "B to deliver every message", func() bool { return l.missing(topic, counts) == 0 })
	for _, d := range l.snapshot() {
		if d.consumer != 1 {
			t.Fatalf("A delivered %d/%d", d.partition, d.offset)
		}
	}
	closeGroup(t, b)
	<-doneB
	if len(lost) > 0 {
		t.Errorf("A, about to be fenced, took B's claims: %v", lost)
	}
}
