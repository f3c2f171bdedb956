package fetch

import (
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// stackClient returns a client of the test stack's brokers with conf,
// which it sets to produce to a chosen partition, and a producer over it;
// both are closed when t ends.
func stackClient(t *testing.T, conf *sarama.Config) (sarama.Client, sarama.SyncProducer) {
	t.Helper()
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	client, err := sarama.NewClient(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = producer.Close() })
	return client, producer
}

// produce writes n messages of value to topic's partition through producer.
func produce(t *testing.T, producer sarama.SyncProducer, topic string, partition int32, n int, value sarama.Encoder) {
	t.Helper()
	for range n {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: partition, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
}
