package fetch

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationFetchesNotBehindSaramaLongPoll: a partition of the group
// read by sarama's partition consumer (every partition with Fetch.Batches
// false; with it, read_committed or after a feed error) long-polls over
// the client's connection to its leader, and Kafka answers one
// connection's requests in order. The fetcher's fetches answered at once
// (the batch feed's busy fetches; a gained partition's first fetch) must
// not queue behind it: they go over connections of their own
// (newFetchers). With MaxWaitTime 3 s, each fetch of a partition with data
// comes back in milliseconds; over the client's connection (as first
// built) each took 2 to 6 s, until sarama's long poll on the idle
// partition ended.
func TestIntegrationFetchesNotBehindSaramaLongPoll(t *testing.T) {
	testenv.Integration(t)
	for _, batches := range []bool{true, false} {
		name := "busy fetch, batches"
		if !batches {
			name = "first fetch, no batches"
		}
		t.Run(name, func(t *testing.T) {
			topic := testenv.UniqueName("fetch-hol")
			testenv.CreateTopic(t, topic, 2)
			conf := sarama.NewConfig()
			conf.Version = sarama.V2_8_0_0
			conf.Consumer.MaxWaitTime = 3 * time.Second
			client, producer := stackClient(t, conf)
			produce(t, producer, topic, 0, 10, sarama.StringEncoder("data"))
			// Partition 1, idle, on sarama's partition consumer.
			consumer, err := sarama.NewConsumerFromClient(client)
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Close()
			pc, err := consumer.ConsumePartition(topic, 1, sarama.OffsetNewest)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.AsyncClose()
			time.Sleep(time.Second) // its long polls are going

			cfg := &Config{Config: conf}
			cfg.Batches = batches
			cg := &env{config: cfg, client: client, log: slog.New(slog.DiscardHandler)}
			busy, idle := newFetchers(cg) // as the group builds them
			defer busy.closeConns()
			defer idle.closeConns()
			var slow []time.Duration
			for i := range 3 {
				began := time.Now()
				var msgs []*sarama.ConsumerMessage
				if batches { // the feed's busy fetch
					r := busy.fetchSized(context.Background(), topic, 0, int64(i), math.MaxInt, conf.Consumer.Fetch.Default)
					msgs, err = r.msgs, r.err
				} else { // fastStart's first fetch
					msgs, err = busy.fetch(context.Background(), topic, 0, int64(i))
				}
				took := time.Since(began)
				if err != nil || len(msgs) == 0 {
					t.Fatalf("fetch %d: %d messages, err %v", i, len(msgs), err)
				}
				t.Logf("fetch at offset %d: %d messages in %v", i, len(msgs), took.Round(time.Millisecond))
				if took > time.Second {
					slow = append(slow, took.Round(time.Millisecond))
				}
			}
			if len(slow) > 0 {
				t.Fatalf("%d of 3 fetches (data ready, answered at once) took over 1 s: %v, queued behind sarama's %v long poll on the idle partition, same connection", len(slow), slow, conf.Consumer.MaxWaitTime)
			}
		})
	}
}
