package consumergroup

import "github.com/IBM/sarama"

// newSaramaConsumer returns the sarama consumer of the group's partition
// consumers, on client, with Consumer.Interceptors left out: the worker
// runs them as it hands each message out (fetch.Engine.HandingOut), on
// every path. sarama's partition consumer runs them on every message it
// buffers, so a message a seek or a close dropped would be intercepted
// too, and a message handed out twice.
func newSaramaConsumer(client sarama.Client) (sarama.Consumer, error) {
	conf := *client.Config()
	conf.Consumer.Interceptors = nil
	return sarama.NewConsumerFromClient(withConfig{Client: client, conf: &conf})
}

// withConfig is a client whose Config is conf: sarama's consumer takes its
// settings from its client's Config.
type withConfig struct {
	sarama.Client
	conf *sarama.Config
}

// Config returns the consumer's config.
func (c withConfig) Config() *sarama.Config { return c.conf }
