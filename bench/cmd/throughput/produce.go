package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

// partitions is the topic's partition count.
const partitions = 4

// produce creates topic with 4 partitions and writes n messages to it
// with producer ("sarama" or "franz"), partition p getting messages
// p*n/4 up to (p+1)*n/4, uncompressed, each value "message <i>". It
// returns the messages the topic holds: the sum of its end offsets.
//
// The producer decides how the log is batched, which weighs on every
// reader's rate and memory: sarama's sends 5,000 at a time (as
// integration/cmd/memcase writes its topics), franz-go's batches as it
// does by default.
func produce(brokers []string, topic string, n int, producer string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.AllowAutoTopicCreation(), // only as a fallback: the topic is created below
	)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if err := benchstack.CreateTopic(ctx, brokers, topic, partitions); err != nil {
		return 0, err
	}
	switch producer {
	case "sarama":
		err = produceSarama(brokers, topic, n)
	case "franz":
		err = produceFranz(ctx, cl, topic, n)
	default:
		err = fmt.Errorf("unknown producer %q", producer)
	}
	if err != nil {
		return 0, err
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	total := 0
	ends.Each(func(o kadm.ListedOffset) { total += int(o.Offset) })
	if total != n {
		return 0, fmt.Errorf("%s holds %d messages, %d produced", topic, total, n)
	}
	return total, nil
}

// partitionOf is message i's partition of n.
func partitionOf(i, n int) int32 { return int32(int64(i) * partitions / int64(n)) }

// produceFranz writes the n messages through cl, a franz-go client.
func produceFranz(ctx context.Context, cl *kgo.Client, topic string, n int) error {
	var (
		mu    sync.Mutex
		first error
	)
	for i := range n {
		r := &kgo.Record{
			Topic:     topic,
			Partition: partitionOf(i, n),
			Value:     []byte("message " + strconv.Itoa(i)),
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return first
}

// produceSarama writes the n messages with sarama's sync producer, 5,000
// at a time, idempotent.
func produceSarama(brokers []string, topic string, n int) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	const chunk = 5000
	for sent := 0; sent < n; sent += chunk {
		var msgs []*sarama.ProducerMessage
		for i := sent; i < min(sent+chunk, n); i++ {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: partitionOf(i, n), Value: sarama.StringEncoder("message " + strconv.Itoa(i))})
		}
		if err := p.SendMessages(msgs); err != nil {
			return err
		}
	}
	return nil
}

// listPartitions returns the partitions of topic that cl's metadata lists.
func listPartitions(ctx context.Context, cl *kgo.Client, topic string) ([]int32, error) {
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return nil, err
	}
	td, ok := md.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("topic %s not in metadata", topic)
	}
	if td.Err != nil {
		return nil, td.Err
	}
	return td.Partitions.Numbers(), nil
}
