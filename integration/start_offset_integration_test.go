package integration

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// waitOffsets waits until every partition 0..partitions-1 of topic has an
// offset node holding want[p] (0 when absent from want) and returns how
// long that took.
func waitOffsets(t *testing.T, kz *kazoo.Kazoo, group, topic string, partitions int32, want map[int32]int64, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got, err := kz.Consumergroup(group).FetchAllOffsets()
		ok := err == nil
		for p := range partitions {
			if o, has := got[topic][p]; !has || o != want[p] {
				ok = false
			}
		}
		if ok {
			break
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %v: offset nodes of %s/%s = %v (err %v), want %v for partitions 0..%d", timeout, group, topic, got[topic], err, want, partitions-1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestIntegrationStartOffsetsWritten: a partition never marked (nothing was
// ever produced to it) still gets an offset node, holding the start offset
// resolved from Offsets.Initial, so every partition 0..n-1 has one.
func TestIntegrationStartOffsetsWritten(t *testing.T) {
	testenv.Integration(t)
	const partitions = 4
	topic := newTopic(t, partitions)
	counts := produceTo(t, topic, map[int32]int{0: 7, 2: 3}) // 1 and 3 stay empty

	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()

	t.Run("oldest, consumed", func(t *testing.T) {
		group := testenv.UniqueName("start-oldest")
		l := newLedger()
		h := recordDeliveries(t, group, topic, partitions, l)
		cg := join(t, group, []string{topic}, nil) // Initial: oldest
		done := consume(t, 0, cg, l)
		waitFor(t, 20*time.Second, "every message delivered", func() bool { return l.distinct() == 10 })
		took := waitOffsets(t, kz, group, topic, partitions, counts, 10*time.Second)
		t.Logf("all %d offset nodes written %v after the last delivery: %v", partitions, took, counts)
		closeGroup(t, cg)
		<-done
		// After Close as well: the empty partitions keep their start.
		waitOffsets(t, kz, group, topic, partitions, counts, time.Second)
		h.assert(expectation{produced: counts})
	})

	t.Run("newest, nothing delivered", func(t *testing.T) {
		group := testenv.UniqueName("start-newest")
		cfg := testConfig()
		cfg.Offsets.Initial = sarama.OffsetNewest
		cfg.Offsets.CommitInterval = time.Hour // the start is written on claim, not by the commit loop
		l := newLedger()
		h := recordDeliveries(t, group, topic, partitions, l)
		joined := time.Now()
		cg := join(t, group, []string{topic}, cfg)
		done := consume(t, 0, cg, l)
		waitOffsets(t, kz, group, topic, partitions, counts, 10*time.Second)
		t.Logf("start offsets of all %d partitions stored %v after joining", partitions, time.Since(joined))

		// The start is exactly the first offset delivered: a message
		// produced now is delivered, and its mark committed on Close.
		produceTo(t, topic, map[int32]int{1: 1})
		waitFor(t, 20*time.Second, "the new message", func() bool { return l.distinct() == 1 })
		closeGroup(t, cg)
		<-done
		if l.all[0].partition != 1 || l.all[0].offset != 0 {
			t.Fatalf("delivered %+v, want partition 1 offset 0", l.all[0])
		}
		want := map[int32]int64{0: 7, 1: 1, 2: 3, 3: 0}
		waitOffsets(t, kz, group, topic, partitions, want, time.Second)
		if rep := h.assert(expectation{produced: map[int32]int64{1: 1}}); rep.deliveries != 1 {
			t.Errorf("history: %d deliveries, want the one message produced after the join", rep.deliveries)
		}
	})
}

// TestIntegrationOutOfRangeResetWritten: a stored offset beyond the log is
// reset to Offsets.Initial, and the new position is written at once,
// before anything is marked.
func TestIntegrationOutOfRangeResetWritten(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produceTo(t, topic, map[int32]int{0: 5})
	group := testenv.UniqueName("reset-newest")

	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	if err := kz.Consumergroup(group).Create(); err != nil {
		t.Fatal(err)
	}
	if err := kz.Consumergroup(group).CommitOffset(topic, 0, 1000); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig()
	cfg.Offsets.Initial = sarama.OffsetNewest
	cfg.Offsets.CommitInterval = time.Hour
	cg := join(t, group, []string{topic}, cfg)
	sawReset := make(chan struct{})
	done := readGroup(cg, 0, newLedger(), 0, func(err error) {
		t.Logf("error: %v", err)
		select {
		case <-sawReset:
		default:
			close(sawReset)
		}
	})
	took := waitOffsets(t, kz, group, topic, 1, map[int32]int64{0: 5}, 10*time.Second)
	t.Logf("out-of-range offset 1000 reset to 5 (newest) and stored in %v", took)
	select {
	case <-sawReset:
	case <-time.After(5 * time.Second):
		t.Error("the out-of-range reset was not reported on Errors()")
	}
	closeGroup(t, cg)
	<-done
}
