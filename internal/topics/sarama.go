package topics

import (
	"fmt"

	"github.com/IBM/sarama"
)

// SaramaMetadata sends metadata requests through a sarama client of its
// own, configured so that asking never creates a topic (the brokers may
// have auto.create.topics.enable on, and a missing topic must stay missing,
// as it does in ZooKeeper), nothing is refreshed in the background and
// nothing is retried inside sarama: every request is one the refresh
// interval accounts for.
type SaramaMetadata struct {
	client  sarama.Client
	version sarama.KafkaVersion
}

// NewSaramaMetadata connects to brokers with a copy of base, changed as
// above; base itself is not changed.
func NewSaramaMetadata(brokers []string, base *sarama.Config) (*SaramaMetadata, error) {
	conf := *base
	conf.Metadata.AllowAutoTopicCreation = false
	conf.Metadata.Full = false
	conf.Metadata.RefreshFrequency = 0
	conf.Metadata.Retry.Max = 0
	client, err := sarama.NewClient(brokers, &conf)
	if err != nil {
		return nil, err
	}
	return &SaramaMetadata{client: client, version: conf.Version}, nil
}

// Fetch sends one metadata request for topics to the least loaded broker.
// When that broker fails, the client is asked to refresh its broker list
// (sarama then drops the broker and tries the others), so the next fetch
// goes to a live one.
func (s *SaramaMetadata) Fetch(topics []string) (*sarama.MetadataResponse, error) {
	b := s.client.LeastLoadedBroker()
	if b == nil {
		return nil, sarama.ErrOutOfBrokers
	}
	req := sarama.NewMetadataRequest(s.version, topics)
	req.AllowAutoTopicCreation = false
	resp, err := b.GetMetadata(req)
	if err != nil {
		_ = s.client.RefreshMetadata(topics...)
		return nil, fmt.Errorf("broker %s: %w", b.Addr(), err)
	}
	return resp, nil
}

// Close closes the client, failing a request in flight.
func (s *SaramaMetadata) Close() error { return s.client.Close() }
