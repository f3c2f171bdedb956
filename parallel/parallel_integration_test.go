package parallel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/parallel"
)

// TestIntegrationParallelRebalance: parallel on consumergroup's
// HandlerGroup, with a second member joining mid-run: 0 messages lost, 0
// per-key order violations, and on each partition that moves, the new
// member starts only after the old one finished its last message.
func TestIntegrationParallelRebalance(t *testing.T) {
	testenv.Integration(t)
	const n, keys = 6000, 200
	topic := testenv.UniqueName("parallel-rebalance")
	testenv.CreateTopic(t, topic, 4)
	want := produceKeyed(t, topic, n, keys)
	group := testenv.UniqueName("parallel-rebalance")
	l := newLedger()
	pcfg := parallel.Config{MaxInFlight: 8, DrainTimeout: 5 * time.Second}

	members := make([]func(), 0, 2)
	for member := range 2 {
		if member == 1 {
			// Join once a quarter is processed, so every partition has
			// a backlog and work in flight when it moves.
			waitUntil(t, 60*time.Second, "a quarter processed", func() bool { return l.distinct() >= n/4 })
		}
		g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, groupConfig())
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, consumeLoop(t, g, topic, parallel.NewHandler(l.fn(member, 20*time.Millisecond), pcfg), nil))
	}
	waitUntil(t, 120*time.Second, "every message processed", func() bool { return l.distinct() >= n })
	for _, stop := range members {
		stop()
	}
	l.check(t, want)
	if l.handovers(t) == 0 {
		t.Error("no partition moved to the second member")
	}
}

// TestIntegrationParallelStopReportsError: under FailureStop, a message
// whose retries are exhausted reaches HandlerGroup's Errors() as a
// *consumergroup.PartitionError wrapping the *parallel.MessageError; the
// session ends without the group's drain waiting for marks that cannot
// come (no "gave up waiting" error), and the next session delivers the
// message again (nothing was marked past it): every message is processed,
// in order per key.
func TestIntegrationParallelStopReportsError(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("parallel-stop")
	testenv.CreateTopic(t, topic, 1)
	want := produceKeyed(t, topic, 100, 10)
	group := testenv.UniqueName("parallel-stop")
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, groupConfig())
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	record := l.fn(0, time.Millisecond)
	boom := errors.New("boom")
	failures := 0
	fn := func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		if msg.Offset == 50 && failures < 2 { // the two attempts of the first session
			failures++
			return boom
		}
		return record(ctx, msg)
	}
	cfg := parallel.Config{Retry: parallel.Retry{InitialInterval: time.Millisecond, MaxAttempts: 2}}
	errs := make(chan error, 16)
	stop := consumeLoop(t, g, topic, parallel.NewHandler(fn, cfg), errs)
	defer stop()

	var pe *consumergroup.PartitionError
	var me *parallel.MessageError
	select {
	case err := <-errs:
		if !errors.As(err, &pe) || !errors.As(err, &me) || me.Offset != 50 || me.Attempts != 2 || !errors.Is(err, boom) {
			t.Fatalf("Errors(): %v, want a PartitionError wrapping the MessageError of offset 50 after 2 attempts", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no error on Errors() within 60s")
	}
	waitUntil(t, 60*time.Second, "every message processed in the next session", func() bool { return l.distinct() >= 100 })
	stop()
	for len(errs) > 0 {
		if err := <-errs; strings.Contains(err.Error(), "gave up waiting") {
			t.Errorf("the group's drain waited for marks of messages parallel will not process: %v", err)
		}
	}
	l.check(t, want)
}

// TestIntegrationParallelSaramaGroup: the same handler runs on sarama's
// own consumer group: 0 lost, 0 per-key order violations.
func TestIntegrationParallelSaramaGroup(t *testing.T) {
	testenv.Integration(t)
	if testenv.KRaft() {
		t.Skip("uses the broker's group coordinator; runs against the ZooKeeper-mode stack")
	}
	const n = 2000
	topic := testenv.UniqueName("parallel-sarama")
	testenv.CreateTopic(t, topic, 4)
	want := produceKeyed(t, topic, n, 100)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Return.Errors = true
	g, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), testenv.UniqueName("parallel-sarama"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	stop := consumeLoop(t, g, topic, parallel.NewHandler(l.fn(0, 5*time.Millisecond), parallel.Config{MaxInFlight: 16}), nil)
	waitUntil(t, 60*time.Second, "every message processed", func() bool { return l.distinct() >= n })
	stop()
	l.check(t, want)
}

// TestIntegrationParallelRevokeStalled: on HandlerGroup, a claim whose
// window is full behind a message that never finishes (so it reads
// nothing, and cannot see its channel close) still sees its partition
// move when a second member joins: it cancels the stalled message after
// DrainTimeout and hands the partition over, without the group giving up
// on its marks after Offsets.ProcessingTimeout, and the new member
// processes everything from the stalled message on, starting only after
// the stalled run was cancelled.
func TestIntegrationParallelRevokeStalled(t *testing.T) {
	testenv.Integration(t)
	const n, stallAt = 400, 10
	topic := testenv.UniqueName("parallel-stalled")
	testenv.CreateTopic(t, topic, 2)
	want := produceKeyed(t, topic, n, 50)
	group := testenv.UniqueName("parallel-stalled")
	cfg := groupConfig()
	cfg.Offsets.ProcessingTimeout = 20 * time.Second
	pcfg := parallel.Config{MaxInFlight: 4, DrainTimeout: time.Second}
	l := newLedger()

	var mu sync.Mutex
	stalled := map[int32]time.Time{} // partition: when the stalled run ended
	record0 := l.fn(0, time.Millisecond)
	stall := func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		if msg.Offset != stallAt {
			return record0(ctx, msg)
		}
		<-ctx.Done()
		mu.Lock()
		stalled[msg.Partition] = time.Now()
		mu.Unlock()
		return ctx.Err()
	}
	errs := make(chan error, 64)
	g0, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop0 := consumeLoop(t, g0, topic, parallel.NewHandler(stall, pcfg), errs)
	defer stop0()
	// Both partitions stall at offset 10 with the window full.
	waitUntil(t, 60*time.Second, "both partitions stalled", func() bool { return l.distinct() >= 2*(stallAt+pcfg.MaxInFlight-1) })

	g1, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop1 := consumeLoop(t, g1, topic, parallel.NewHandler(l.fn(1, time.Millisecond), pcfg), errs)
	defer stop1()
	var moved int32 = -1
	waitUntil(t, 60*time.Second, "a partition processed to its end by the new member", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for p, offs := range want {
			all := true
			for o := range offs {
				if o >= stallAt && !l.done[[2]int64{int64(p), o}] {
					all = false
					break
				}
			}
			if all {
				moved = p
				return true
			}
		}
		return false
	})
	stop1()
	stop0()
	for len(errs) > 0 {
		if err := <-errs; strings.Contains(err.Error(), "gave up waiting") {
			t.Errorf("the group gave up on the stalled claim's marks: %v", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	var first time.Time
	for _, r := range l.runs {
		if r.partition == moved && r.member == 1 && (first.IsZero() || r.start.Before(first)) {
			first = r.start
		}
	}
	end, ok := stalled[moved]
	switch {
	case !ok:
		t.Errorf("partition %d: the stalled run was never cancelled", moved)
	case first.Before(end):
		t.Errorf("partition %d: the new member started at %s, before the stalled run ended at %s", moved, first.Format("15:04:05.000"), end.Format("15:04:05.000"))
	default:
		t.Logf("partition %d: stalled run cancelled at %s, new member's first start %v later", moved, end.Format("15:04:05.000"), first.Sub(end).Round(time.Millisecond))
	}
}
