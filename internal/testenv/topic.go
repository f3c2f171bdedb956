package testenv

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// CreateTopic creates topic name with the given number of partitions
// (replication factor 1) on the stack, waits up to 30 s until every
// partition has a leader that serves it, and deletes the topic when the
// test ends. It fails the test if the topic exists already: for a topic
// that must not exist before the test, that means something auto-created
// it.
func CreateTopic(t testing.TB, name string, partitions int32) {
	t.Helper()
	cfg := sarama.NewConfig()
	admin, err := sarama.NewClusterAdmin(KafkaAddrs(), cfg)
	if err != nil {
		t.Fatalf("cluster admin: %v", err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	t.Cleanup(func() {
		if a, err := sarama.NewClusterAdmin(KafkaAddrs(), cfg); err == nil {
			if err := a.DeleteTopic(name); err != nil {
				t.Logf("delete topic %s: %v", name, err)
			}
			_ = a.Close()
		}
	})
	client, err := sarama.NewClient(KafkaAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(30 * time.Second)
	for !leadersReady(client, name, partitions) {
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: not every partition has a leader after 30s", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leadersReady(client sarama.Client, name string, partitions int32) bool {
	if client.RefreshMetadata(name) != nil {
		return false
	}
	ps, err := client.Partitions(name)
	if err != nil || int32(len(ps)) != partitions {
		return false
	}
	for _, p := range ps {
		if _, err := client.Leader(name, p); err != nil {
			return false
		}
		// A KRaft broker lists itself as leader in its metadata a moment
		// before it serves the partition: ask it for the partition's end.
		if _, err := client.GetOffset(name, p, sarama.OffsetNewest); err != nil {
			return false
		}
	}
	return true
}
