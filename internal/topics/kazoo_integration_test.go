package topics

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationZooKeeperSource reads a real topic through Kazoo: its
// partitions with the leaders Kafka reports, a missing topic as a
// *MissingTopicError wrapping kazoo.ErrNoNode, and the topic's creation
// firing Changed.
func TestIntegrationZooKeeperSource(t *testing.T) {
	testenv.Integration(t)
	if testenv.KRaft() {
		t.Skip("the ZooKeeper source reads topics a KRaft cluster does not write to ZooKeeper")
	}
	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close() // closes the watches the source left armed
	z := NewZooKeeper(NewKazoo(kz), true)
	defer z.Close()

	name := testenv.UniqueName("topics-zk")
	_, err = z.Partitions(name, Leaders{All: true})
	var mt *MissingTopicError
	if !errors.As(err, &mt) || !errors.Is(err, kazoo.ErrNoNode) {
		t.Fatalf("before creation: want a missing topic wrapping ErrNoNode, got %v", err)
	}

	testenv.CreateTopic(t, name, 3)
	select {
	case <-z.Changed():
	case <-time.After(30 * time.Second):
		t.Fatal("creating the topic did not fire Changed")
	}
	parts, err := z.Partitions(name, Leaders{All: true})
	if err != nil || len(parts) != 3 {
		t.Fatalf("after creation: %v, %v; want 3 partitions", parts, err)
	}

	client, err := sarama.NewClient(testenv.KafkaAddrs(), sarama.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for i, p := range parts {
		leader, err := client.Leader(name, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != int32(i) || p.Leader != leader.ID() {
			t.Errorf("partition %d: %+v, want ID %d led by %d", i, p, i, leader.ID())
		}
	}
}
