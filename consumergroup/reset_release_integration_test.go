package consumergroup

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// A reset bumps every epoch, so an owner draining a partition it is handing
// over loses its claim. The epoch moved, but nobody took the owner node: it
// still belongs to the owner's live session, so unless the owner deletes it
// the instance the partition moved to can never claim it.
func TestIntegrationResetDuringHandOffReleasesOwnerNode(t *testing.T) {
	testenv.Integration(t)
	cfg := fenceTestConfig()
	cfg.Offsets.ProcessingTimeout = 10 * time.Second // x's drain waits for marks that never come
	topic := testenv.UniqueName("reset-rel")
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	defer admin.DeleteTopic(topic)
	pcfg := sarama.NewConfig()
	pcfg.Producer.Return.Successes = true
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p := int32(0); p < 2; p++ {
		for range 3 {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.StringEncoder("m")}); err != nil {
				t.Fatal(err)
			}
		}
	}

	group := testenv.UniqueName("reset-rel-g")
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	kg := kz.Consumergroup(group)
	owner := func(p int32) string {
		o, err := kg.PartitionOwner(topic, p)
		if err != nil || o == nil {
			return ""
		}
		return o.ID
	}
	waitFor := func(d time.Duration, cond func() bool) bool {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if cond() {
				return true
			}
		}
		return false
	}
	logErrors := func(cg *ConsumerGroup) {
		go func() {
			for e := range cg.Errors() {
				t.Logf("%s error: %v", cg.instance.ID, e)
			}
		}()
	}

	x, err := JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	logErrors(x)
	seen := map[int32]bool{}
	for len(seen) < 2 { // delivered on both partitions, never marked
		select {
		case m := <-x.Messages():
			seen[m.Partition] = true
		case <-time.After(30 * time.Second):
			t.Fatal("x got no message from both partitions")
		}
	}
	go func() {
		for range x.Messages() { // read on, never mark
		}
	}()

	y, err := JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	logErrors(y)
	go func() {
		for m := range y.Messages() {
			_ = y.CommitUpto(m)
		}
	}()
	time.Sleep(2 * time.Second) // x sees y and drains the partition it hands over
	if err := kg.ResetOffsets(); err != nil {
		t.Fatal(err)
	}

	budget := 8 * time.Second // well inside x's drain: only a release hands the partition over
	if !waitFor(budget, func() bool { return owner(0) == y.instance.ID || owner(1) == y.instance.ID }) {
		t.Errorf("%v after the reset the partition x hands over is still owned by x (p0=%q p1=%q; x=%q y=%q): "+
			"x lost its claim to the reset, skipped the release, and its live session keeps the owner node",
			budget, owner(0), owner(1), x.instance.ID, y.instance.ID)
	}
}
