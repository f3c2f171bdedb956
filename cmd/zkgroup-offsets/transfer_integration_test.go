package main

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Offsets copied from ZooKeeper to Kafka and back arrive unchanged (no
// "minus one": both stores hold the next offset to consume), and a consumer
// of the destination starts at exactly those offsets.
func TestIntegrationTransferExact(t *testing.T) {
	testenv.Integration(t)
	const parts = 3
	topic := newTopic(t, parts)
	produceEach(t, topic, parts, 10, time.Time{})
	kz := connectZK(t)

	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	kafkaOffsets := func(group string) map[int32]int64 {
		t.Helper()
		resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[int32]int64)
		for p, b := range resp.Blocks[topic] {
			if b.Offset >= 0 {
				got[p] = b.Offset
			}
		}
		return got
	}

	t.Run("zookeeper to kafka", func(t *testing.T) {
		group := testenv.UniqueName("transfer-zk")
		deleteGroupAfter(t, kz, group)
		defer func() { _ = admin.DeleteConsumerGroup(group) }()
		// Partition 2 is at its high-water mark: a copy that subtracted
		// one would replay its last message.
		want := map[int32]int64{0: 3, 1: 0, 2: 10}
		for p, off := range want {
			if err := kz.Consumergroup(group).CommitOffset(topic, p, off); err != nil {
				t.Fatal(err)
			}
		}
		out := zkgoOK(t, "transfer", "-group", group, "-to", "kafka")
		if !strings.Contains(out, "dry run") || len(kafkaOffsets(group)) != 0 {
			t.Fatalf("the dry run wrote to Kafka: %v\n%s", kafkaOffsets(group), out)
		}
		out = zkgoOK(t, "transfer", "-group", group, "-to", "kafka", "-execute")
		if !strings.Contains(out, "read back: all match") {
			t.Errorf("output lacks the read-back check:\n%s", out)
		}
		if got := kafkaOffsets(group); !maps.Equal(got, want) {
			t.Fatalf("Kafka's offsets = %v, want %v", got, want)
		}

		// A Kafka consumer group resumes exactly there.
		produceEach(t, topic, parts, 1, time.Time{}) // partition 2 gets offset 10
		first := kafkaGroupFirstOffsets(t, group, topic, parts)
		if !maps.Equal(first, want) {
			t.Fatalf("a Kafka consumer group started at %v, want %v", first, want)
		}
	})

	t.Run("kafka to zookeeper", func(t *testing.T) {
		kgroup := testenv.UniqueName("transfer-kafka")
		group := testenv.UniqueName("transfer-zk2")
		deleteGroupAfter(t, kz, group)
		defer func() { _ = admin.DeleteConsumerGroup(kgroup) }()
		want := map[int32]int64{0: 5, 1: 11, 2: 1} // 11: the high-water mark
		commit := map[string]map[int32]sarama.OffsetAndMetadata{topic: {}}
		for p, off := range want {
			commit[topic][p] = sarama.OffsetAndMetadata{Offset: off, LeaderEpoch: -1}
		}
		if _, err := admin.AlterConsumerGroupOffsets(kgroup, commit, nil); err != nil {
			t.Fatal(err)
		}
		out := zkgoOK(t, "transfer", "-group", group, "-kafka-group", kgroup, "-to", "zookeeper", "-execute")
		if !strings.Contains(out, "read back: all match") || !strings.Contains(out, "does not exist in ZooKeeper; -execute creates it") {
			t.Errorf("output lacks the read-back check or the note on the new group:\n%s", out)
		}
		if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, want) {
			t.Fatalf("ZooKeeper offsets = %v, want %v", got, want)
		}
		// This library's consumer group resumes exactly there.
		produceEach(t, topic, parts, 1, time.Time{}) // partition 1 gets offset 11
		first := firstOffsets(t, joinMember(t, group, topic), parts, 60*time.Second)
		if !maps.Equal(first, want) {
			t.Fatalf("the ZooKeeper group started at %v, want %v", first, want)
		}
	})
}

// kafkaGroupFirstOffsets consumes the topic as a member of the Kafka group
// (Kafka's group coordinator, starting from the oldest offset when nothing
// is committed) and returns the offset of the first message of each
// partition.
func kafkaGroupFirstOffsets(t *testing.T, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cg, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	h := &firstHandler{first: make(map[int32]int64), partitions: partitions, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				t.Logf("kafka consumer group: %v", err)
			}
		}
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
		t.Fatalf("the Kafka consumer group saw the first messages %v of %d partitions in 60s", h.snapshot(), partitions)
	}
	return h.snapshot()
}

type firstHandler struct {
	mu         sync.Mutex
	first      map[int32]int64
	partitions int32
	done       chan struct{}
	closed     bool
}

func (h *firstHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *firstHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *firstHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.mu.Lock()
		if _, ok := h.first[m.Partition]; !ok {
			h.first[m.Partition] = m.Offset
		}
		if int32(len(h.first)) == h.partitions && !h.closed {
			h.closed = true
			close(h.done)
		}
		h.mu.Unlock()
	}
	return nil
}

func (h *firstHandler) snapshot() map[int32]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.first)
}
