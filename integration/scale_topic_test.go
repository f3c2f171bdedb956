package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// scaleTopic returns the topic zkgroup.scale.<partitions>, creating it if
// the stack does not have it yet, with at least perPartition messages in
// every partition (it produces what is missing). The topic is kept after
// the benchmark: creating 1,024 or 4,096 partitions on the one local broker
// takes long, and every run reads it under a new group name, so what
// earlier runs consumed does not matter.
func scaleTopic(t testing.TB, partitions int32, perPartition int64) string {
	t.Helper()
	name := fmt.Sprintf("zkgroup.scale.%d", partitions)
	cfg := sarama.NewConfig()
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), cfg)
	if err != nil {
		t.Fatalf("cluster admin: %v", err)
	}
	err = admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false)
	_ = admin.Close()
	// A request timeout only means the broker is still creating the
	// partitions: the wait below covers it.
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) && !errors.Is(err, sarama.ErrRequestTimedOut) {
		t.Fatalf("create topic %s: %v", name, err)
	}
	client, err := sarama.NewClient(testenv.KafkaAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(5 * time.Minute)
	var least int64
	for {
		least, err = leastMessages(client, name, partitions)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: not ready after 5 minutes: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if least < perPartition {
		produce(t, name, int(perPartition-least)*int(partitions))
	}
	return name
}

// leastMessages returns the fewest messages any partition of topic holds
// (its newest offset: nothing is ever deleted on the stack), or an error
// while the topic has not every partition with a leader.
func leastMessages(client sarama.Client, topic string, partitions int32) (int64, error) {
	if err := client.RefreshMetadata(topic); err != nil {
		return 0, err
	}
	ps, err := client.Partitions(topic)
	if err != nil {
		return 0, err
	}
	if int32(len(ps)) != partitions {
		return 0, fmt.Errorf("%d of %d partitions", len(ps), partitions)
	}
	least := int64(-1)
	for _, p := range ps {
		n, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return 0, fmt.Errorf("partition %d: %w", p, err)
		}
		if least < 0 || n < least {
			least = n
		}
	}
	return least, nil
}

// newestOffsets returns each partition's newest offset (the count of its
// messages: nothing is deleted on the stack), asking each leader once for
// all of its partitions.
func newestOffsets(t testing.TB, topic string) map[int32]int64 {
	t.Helper()
	client, err := sarama.NewClient(testenv.KafkaAddrs(), sarama.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ps, err := client.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	reqs := make(map[*sarama.Broker]*sarama.OffsetRequest)
	for _, p := range ps {
		leader, err := client.Leader(topic, p)
		if err != nil {
			t.Fatalf("leader of %s/%d: %v", topic, p, err)
		}
		if reqs[leader] == nil {
			reqs[leader] = &sarama.OffsetRequest{Version: 1}
		}
		reqs[leader].AddBlock(topic, p, sarama.OffsetNewest, 1)
	}
	out := make(map[int32]int64, len(ps))
	for leader, req := range reqs {
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			t.Fatalf("offsets of %s from broker %d: %v", topic, leader.ID(), err)
		}
		for p, b := range resp.Blocks[topic] {
			if b.Err != sarama.ErrNoError {
				t.Fatalf("offset of %s/%d: %v", topic, p, b.Err)
			}
			out[p] = b.Offset
		}
	}
	return out
}
