package fetch

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationThrottledFetchOnRealBroker: the real broker, with a
// consumer byte-rate quota on the client id, answers the feed's fetch (v5)
// with a response that holds no partition at all once the quota is
// exceeded. The fetcher reads it as sarama's partition consumer does,
// "nothing yet" (see TestThrottledFetchDoesNotEndTheFeed), not as an error
// that would end a feed.
func TestIntegrationThrottledFetchOnRealBroker(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("throttled")
	testenv.CreateTopic(t, topic, 1)
	clientID := strings.ReplaceAll(topic, ".", "-")
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ClientID = clientID
	conf.Producer.Return.Successes = true
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	entity := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Name: clientID}}
	if err := admin.AlterClientQuotas(entity, sarama.ClientQuotasOp{Key: "consumer_byte_rate", Value: 1024}, false); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = admin.AlterClientQuotas(entity, sarama.ClientQuotasOp{Key: "consumer_byte_rate", Remove: true}, false)
	}()

	producer, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	value := sarama.ByteEncoder(make([]byte, 10_000))
	for range 20 {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	_ = producer.Close()
	time.Sleep(2 * time.Second) // the quota reaches the broker's quota manager

	client, err := sarama.NewClient(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cg := &env{config: &Config{Config: conf}, client: client, log: slog.New(slog.DiscardHandler)}
	busy := newRoundFetcher(cg)
	var next int64
	throttled := 0
	for i := 0; i < 8 && throttled < 2; i++ {
		r := busy.fetchSized(context.Background(), topic, 0, next, math.MaxInt, conf.Consumer.Fetch.Default)
		if r.err != nil {
			t.Fatalf("fetch %d at offset %d (after %d messages): %v: a throttled response (no partition) ends a feed", i, next, next, r.err)
		}
		if r.throttle > 0 {
			throttled++
		}
		t.Logf("fetch %d at offset %d: %d messages, throttled %v", i, next, len(r.msgs), r.throttle)
		next = max(next, r.next)
	}
	if throttled == 0 {
		t.Fatal("the broker never throttled a fetch: the quota did not apply, nothing was tested")
	}
}
