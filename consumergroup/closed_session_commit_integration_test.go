package consumergroup

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// kafkaCommitted returns the group's offset for topic/partition in Kafka,
// -1 when none is stored.
func kafkaCommitted(t *testing.T, group, topic string, partition int32) int64 {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), fenceTestConfig().Config)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {partition}})
	if err != nil {
		t.Fatal(err)
	}
	b := resp.GetBlock(topic, partition)
	if b == nil {
		return -1
	}
	return b.Offset
}

// With kafka storage, a commit is fenced only by what this instance knows
// of its claim. Once the ZooKeeper session holding the claim is closed
// (as CloseContext does a quarter of the session timeout after its
// context ended, and Close at its bound), the owner node is gone and the
// next owner may claim and commit at once: no commit of ours may reach
// Kafka after that, or it overwrites the next owner's. go-zookeeper keeps
// reporting the closed session's id, so the fence must not trust it.
func TestIntegrationNoKafkaCommitOnceTheSessionIsClosed(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cfg := fenceTestConfig()
	cfg.Offsets.Storage = OffsetStorageKafka
	cfg.Offsets.CommitInterval = 0 // commits only when asked
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cg.Close() })
	var first *sarama.ConsumerMessage
	select {
	case first = <-cg.Messages():
	case <-time.After(20 * time.Second):
		t.Fatal("no message delivered")
	}
	before := kafkaCommitted(t, f.group, f.topic, 0)
	if before >= first.Offset+1 {
		t.Fatalf("Kafka holds %d before the mark of offset %d", before, first.Offset)
	}

	_ = cg.kazoo.Close() // the session ends: the owner node with it
	_ = cg.CommitUpto(first)
	_ = cg.FlushOffsets()

	if got := kafkaCommitted(t, f.group, f.topic, 0); got != before {
		t.Errorf("Kafka holds %d after the ZooKeeper session holding the claim was closed, want %d (unchanged): "+
			"a commit was made without the claim", got, before)
	}
}
