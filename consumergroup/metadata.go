package consumergroup

import (
	"fmt"

	"github.com/zkgroup/kafka/internal/topics"
)

// openTopicSource sets cg.topicSrc: Kafka's metadata when Kafka.Brokers is
// set, otherwise ZooKeeper. The Kafka source asks once before it returns,
// so a join fails at once when Kafka cannot answer.
func (cg *ConsumerGroup) openTopicSource() error {
	leaders := cg.config.Assignment.Strategy.UsesLeaders()
	if len(cg.config.Kafka.Brokers) == 0 {
		cg.topicSrc = topics.NewZooKeeper(topics.NewKazoo(cg.kazoo), leaders)
		return nil
	}
	if cg.filter != nil {
		// The topic list a pattern is matched against still comes from
		// ZooKeeper, which a KRaft cluster leaves empty.
		return fmt.Errorf("consumergroup: Kafka.Brokers is not supported with JoinConsumerGroupPattern yet; list the topics with JoinConsumerGroup")
	}
	meta, err := topics.NewSaramaMetadata(cg.config.Kafka.Brokers, cg.config.Config)
	if err != nil {
		return fmt.Errorf("consumergroup: connect to Kafka at %v for metadata: %w", cg.config.Kafka.Brokers, err)
	}
	src, err := topics.NewKafka(topics.KafkaDeps{
		Fetch:   meta.Fetch,
		Release: func() { _ = meta.Close() },
		Log:     cg.log,
		Report:  func(err error) { cg.report(newPartitionError("", -1, err)) },
	}, cg.topics, leaders, cg.config.Kafka.RefreshInterval)
	if err != nil {
		_ = meta.Close()
		return fmt.Errorf("consumergroup: %w", err)
	}
	cg.topicSrc = src
	return nil
}
