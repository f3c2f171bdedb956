package consumergroup

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationFirstFetchNotBehindSaramaLongPoll: with Fetch.Batches
// false, every partition the instance consumes long-polls through sarama's
// partition consumer on the client's connection to its leader, and Kafka
// answers one connection's requests in order. A gained partition's first
// fetch (fastStart) must not wait behind those long polls (up to
// Consumer.MaxWaitTime), or the fast handoff holds only while no other
// partition on that leader is consumed: it goes over a connection of the
// fetcher's own (newFetchers), as with Fetch.Batches on (see
// TestIntegrationBusyFetchNotBehindSaramaLongPoll). As first built, the
// first fetch went over the client's connection there and took 3 to 6 s.
func TestIntegrationFirstFetchNotBehindSaramaLongPoll(t *testing.T) {
	testenv.Integration(t)
	if !metrics.UseNilMetrics {
		metrics.UseNilMetrics = true
	}
	topic := testenv.UniqueName("review-hol-off")
	testenv.CreateTopic(t, topic, 2)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.Consumer.MaxWaitTime = 3 * time.Second
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	client, err := sarama.NewClient(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for range 10 {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("gained")}); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 1, sarama.OffsetNewest) // another partition of the instance, idle
	if err != nil {
		t.Fatal(err)
	}
	defer pc.AsyncClose()
	time.Sleep(time.Second) // its long polls are going

	cfg := &Config{Config: conf}
	cfg.Fetch.Batches = false
	cg := &ConsumerGroup{config: cfg, client: client, log: slog.New(slog.DiscardHandler)}
	busy, idle := newFetchers(cg)
	defer busy.closeConns()
	defer idle.closeConns()
	var slow []time.Duration
	for i := range 3 {
		began := time.Now()
		msgs, err := busy.fetch(context.Background(), topic, 0, int64(i))
		took := time.Since(began)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("first fetch %d: %d messages, err %v", i, len(msgs), err)
		}
		t.Logf("first fetch at offset %d: %d messages in %v", i, len(msgs), took.Round(time.Millisecond))
		if took > time.Second {
			slow = append(slow, took.Round(time.Millisecond))
		}
	}
	if len(slow) > 0 {
		t.Fatalf("%d of 3 first fetches (data ready, answered at once) took over 1 s: %v, queued behind sarama's %v long poll on the idle partition, same connection", len(slow), slow, conf.Consumer.MaxWaitTime)
	}
}
