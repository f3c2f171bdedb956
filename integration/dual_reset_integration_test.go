package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationResetRefusedWhileMembersRun: with kafka or dual storage a
// member joining with Offsets.ResetOffsets while another member runs is
// refused (Kafka's offsets carry no epoch, so the running member could
// read the old Kafka offset back after the reset), and the running member
// keeps its offsets and delivers nothing again. Once it is closed, the
// same join resets both stores and every message is delivered again.
func TestIntegrationResetRefusedWhileMembersRun(t *testing.T) {
	testenv.Integration(t)
	for _, storage := range []consumergroup.OffsetStorage{consumergroup.OffsetStorageDual, consumergroup.OffsetStorageKafka} {
		t.Run(string(storage), func(t *testing.T) { resetWhileRunning(t, storage) })
	}
}

func resetWhileRunning(t *testing.T, storage consumergroup.OffsetStorage) {
	topic := newTopic(t, 1)
	group := testenv.UniqueName("runreset")
	counts := produceTo(t, topic, map[int32]int{0: 10})
	zk := zkClient(t).Consumergroup(group)
	zkOffset := func() int64 {
		n, err := zk.FetchOffset(topic, 0)
		if err != nil {
			t.Fatalf("read ZooKeeper's offset: %v", err)
		}
		return n
	}
	committed := map[int32]int64{0: 10}

	first := newLedger()
	h := recordDeliveries(t, group, topic, 1, first)
	a := join(t, group, []string{topic}, storageConfig(storage))
	aDone := consume(t, 0, a, first)
	waitFor(t, 20*time.Second, "A delivers every message", func() bool { return first.distinct() == 10 })
	waitKafkaOffsets(t, group, topic, committed, 10*time.Second)
	if storage == consumergroup.OffsetStorageDual {
		waitFor(t, 10*time.Second, "ZooKeeper holds A's offset", func() bool { return zkOffset() == 10 })
	}

	members, err := zk.Instances()
	if err != nil || len(members) != 1 {
		t.Fatalf("members of %s: %v, %v; want A alone", group, members, err)
	}
	cfg := storageConfig(storage)
	cfg.Offsets.ResetOffsets = true
	b, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err == nil {
		// What the refusal prevents: watch both members for a while.
		second := newLedger()
		bDone := consume(t, 1, b, second)
		time.Sleep(5 * time.Second)
		closeGroup(t, b)
		<-bDone
		closeGroup(t, a)
		<-aDone
		t.Fatalf("B joined with Offsets.ResetOffsets while A ran (want ErrResetWhileMembersRun); then %d of 10 were delivered again "+
			"(A %d, B %d), Kafka holds %v, ZooKeeper %d",
			first.duplicates()+second.distinct(), first.duplicates(), second.distinct(),
			kafkaOffsets(t, group, topic, 1), zkOffset())
	}
	if !errors.Is(err, consumergroup.ErrResetWhileMembersRun) {
		closeGroup(t, a)
		<-aDone
		t.Fatalf("join with Offsets.ResetOffsets while A ran: %v, want ErrResetWhileMembersRun", err)
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{group, members[0].ID, "Offsets.ResetOffsets", "Offsets.Storage"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	time.Sleep(time.Second) // ten of A's commit rounds
	if got := kafkaOffsets(t, group, topic, 1); got[0] != 10 {
		t.Errorf("Kafka holds %v after the refused reset, want A's offset 10", got)
	}
	if storage == consumergroup.OffsetStorageDual {
		if got := zkOffset(); got != 10 {
			t.Errorf("ZooKeeper holds %d after the refused reset, want A's offset 10", got)
		}
	}
	if d := first.duplicates(); d != 0 || first.distinct() != 10 {
		t.Errorf("A delivered %d messages again after the refused reset", d)
	}
	closeGroup(t, a)
	<-aDone

	second := newLedger()
	h.attach(second)
	h.reset(0, -1) // ResetOffsets: B starts again at the oldest offset
	b = join(t, group, []string{topic}, cfg)
	bDone := consume(t, 1, b, second)
	waitFor(t, 20*time.Second, "every message delivered again after the reset", func() bool { return second.distinct() == 10 })
	closeGroup(t, b)
	<-bDone
	if d := second.duplicates(); d != 0 {
		t.Errorf("%d duplicates after the reset", d)
	}
	waitKafkaOffsets(t, group, topic, committed, time.Second)
	if rep := h.assert(expectation{produced: counts}); rep.dups != rep.dupsBy[dupReset] {
		t.Errorf("history: duplicates %v, want only the redeliveries after the reset", rep.dupsBy)
	}
}
