package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// partitions is the topic's partition count.
const partitions = 4

// produce creates topic with 4 partitions and writes n messages to it,
// partition p getting messages p*n/4 up to (p+1)*n/4, uncompressed (as
// sarama's producer writes them in BenchmarkIntegrationThroughput), each
// value "message <i>". It returns the messages the topic holds: the sum
// of its end offsets.
func produce(brokers []string, topic string, n int) (int, error) {
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
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		return 0, fmt.Errorf("create %s: %w", topic, err)
	}
	var (
		mu    sync.Mutex
		first error
	)
	for i := range n {
		r := &kgo.Record{
			Topic:     topic,
			Partition: int32(int64(i) * partitions / int64(n)),
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
		return 0, err
	}
	if first != nil {
		return 0, first
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
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
