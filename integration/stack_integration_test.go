package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationStackIsReal proves the stack is a real Kafka registered in a
// real ZooKeeper: it reads the registration Kafka itself wrote under
// /brokers/ids (endpoints included), then produces a message and fetches it
// back through sarama at the address found in ZooKeeper.
func TestIntegrationStackIsReal(t *testing.T) {
	testenv.Integration(t)

	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("connect to ZooKeeper: %v", err)
	}
	defer kz.Close()

	regs, err := kz.BrokerRegistrations()
	if err != nil {
		t.Fatalf("read /brokers/ids: %v", err)
	}
	if len(regs) == 0 {
		t.Fatal("no broker registered under /brokers/ids")
	}
	for id, b := range regs {
		if len(b.Endpoints) == 0 {
			t.Errorf("broker %d: registration has no endpoints", id)
		}
		for _, e := range b.Endpoints {
			if e.Listener == "" || e.Host == "" || e.Port <= 0 {
				t.Errorf("broker %d: endpoint %+v not parsed", id, e)
			}
		}
		if b.Timestamp == "" || b.Version < 4 {
			t.Errorf("broker %d: registration lacks Kafka's timestamp/version: %+v", id, b)
		}
		t.Logf("broker %d: endpoints %v, protocol map %v, version %d", id, b.Endpoints, b.ListenerSecurityProtocolMap, b.Version)
	}
	if _, err := kz.Controller(); err != nil {
		t.Errorf("controller: %v", err)
	}

	addrs, err := kz.BrokerList()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(testenv.KafkaAddrs(), ",")
	if got := strings.Join(addrs, ","); got != want {
		t.Errorf("BrokerList() = %s, want the stack's %s", got, want)
	}

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatalf("sarama client at %v: %v", addrs, err)
	}
	defer client.Close()

	const topic = "zkgroup.test.single"
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	value := fmt.Sprintf("stack-check %d", time.Now().UnixNano())
	partition, offset, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(value)})
	if err != nil {
		t.Fatalf("produce: %v", err)
	}

	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, partition, offset)
	if err != nil {
		t.Fatalf("consume %s/%d@%d: %v", topic, partition, offset, err)
	}
	defer pc.Close()
	select {
	case msg := <-pc.Messages():
		if string(msg.Value) != value || msg.Offset != offset {
			t.Fatalf("fetched %q at %d, want %q at %d", msg.Value, msg.Offset, value, offset)
		}
	case err := <-pc.Errors():
		t.Fatalf("fetch: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no message fetched within 30s")
	}
}
