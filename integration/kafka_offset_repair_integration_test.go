package integration

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationKafkaOffsetRepairedWithinCommitInterval: an offset written
// into Kafka behind the owner's back, as an old owner's late commit lands,
// is replaced by the owner's own within a commit interval or two, though
// the owner, idle, has nothing new to commit; and nothing is delivered
// again meanwhile.
func TestIntegrationKafkaOffsetRepairedWithinCommitInterval(t *testing.T) {
	testenv.Integration(t)
	for _, storage := range []consumergroup.OffsetStorage{consumergroup.OffsetStorageKafka, consumergroup.OffsetStorageDual} {
		t.Run(string(storage), func(t *testing.T) { repairLateCommit(t, storage) })
	}
}

func repairLateCommit(t *testing.T, storage consumergroup.OffsetStorage) {
	const interval = 500 * time.Millisecond
	topic := newTopic(t, 1)
	group := testenv.UniqueName("repair")
	counts := produceTo(t, topic, map[int32]int{0: 10})

	cfg := storageConfig(storage)
	cfg.Offsets.CommitInterval = interval
	l := newLedger()
	h := recordDeliveries(t, group, topic, 1, l)
	cg := join(t, group, []string{topic}, cfg)
	done := consume(t, 0, cg, l)
	defer func() {
		closeGroup(t, cg)
		<-done
	}()
	waitFor(t, 20*time.Second, "every message delivered", func() bool { return l.distinct() == 10 })
	waitKafkaOffsets(t, group, topic, map[int32]int64{0: 10}, 10*time.Second)
	time.Sleep(2 * interval) // idle rounds: nothing left to commit

	// An old owner's late commit, as the broker applies it: a standalone
	// commit (generation -1), which the group cannot refuse.
	client, err := sarama.NewClient(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := admin.AlterConsumerGroupOffsets(group,
		map[string]map[int32]sarama.OffsetAndMetadata{topic: {0: {Offset: 3, LeaderEpoch: -1}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kerr := resp.Errors[topic][0]; kerr != sarama.ErrNoError {
		t.Fatalf("the late commit was refused: %v", kerr)
	}
	written := time.Now()

	waitKafkaOffsets(t, group, topic, map[int32]int64{0: 10}, 2*interval+250*time.Millisecond)
	t.Logf("Kafka held the owner's offset again %v after the late commit", time.Since(written).Round(time.Millisecond))
	if d := l.duplicates(); d != 0 || l.distinct() != 10 {
		t.Errorf("%d delivered again, %d distinct, want 0 and 10", d, l.distinct())
	}
	if rep := h.assert(expectation{produced: counts}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v)", rep.dups, rep.dupsBy)
	}
}
