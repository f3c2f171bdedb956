package monitor

import (
	"context"
	"errors"

	"github.com/IBM/sarama"
)

// Kafka is the lag refresh's Leaders and ListOffsets over a sarama
// client: the leaders as the client has them cached (the fetches of the
// same partitions keep them there), ListOffsets over the client's
// connections.
type Kafka struct {
	client sarama.Client
}

// NewKafka returns the Leaders and ListOffsets of client.
func NewKafka(client sarama.Client) *Kafka {
	return &Kafka{client: client}
}

// Leaders implements Leaders with the client's Leader: a cached leader,
// or one looked up with a metadata request.
func (k *Kafka) Leaders(ctx context.Context, tps []TopicPartition) ([]Lookup, error) {
	out := make([]Lookup, len(tps))
	for i, tp := range tps {
		b, err := k.client.Leader(tp.Topic, tp.Partition)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Leader = Broker{ID: b.ID(), Addr: b.Addr()}
	}
	return out, ctx.Err()
}

// HighWaterMarks implements ListOffsets.
func (k *Kafka) HighWaterMarks(ctx context.Context, broker Broker, tps []TopicPartition) (map[TopicPartition]int64, error) {
	b, err := k.client.Broker(broker.ID)
	if err != nil {
		return nil, err
	}
	return highWaterMarks(b, k.client.Config().Version, tps)
}

// Close implements ListOffsets.
func (k *Kafka) Close() {}

// highWaterMarks asks broker for the high-water marks of tps in one
// ListOffsets request.
func highWaterMarks(broker *sarama.Broker, version sarama.KafkaVersion, tps []TopicPartition) (map[TopicPartition]int64, error) {
	req := sarama.NewOffsetRequest(version)
	for _, tp := range tps {
		req.AddBlock(tp.Topic, tp.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := broker.GetAvailableOffsets(req)
	if err != nil {
		return nil, err
	}
	out := make(map[TopicPartition]int64, len(tps))
	for _, tp := range tps {
		block := resp.GetBlock(tp.Topic, tp.Partition)
		if block == nil || !errors.Is(block.Err, sarama.ErrNoError) || len(block.Offsets) != 1 {
			continue
		}
		out[tp] = block.Offsets[0]
	}
	return out, nil
}
