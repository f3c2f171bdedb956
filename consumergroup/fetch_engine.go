package consumergroup

import "github.com/zkgroup/kafka/internal/fetch"

// newFetchEngine returns the engine the group's partitions fetch through,
// set up from the group's Config: its Kafka settings, Fetch.Batches and
// Offsets.Initial. See docs/batch-feed.md.
func (cg *ConsumerGroup) newFetchEngine() *fetch.Engine {
	conf := fetch.Config{Config: cg.config.Config, Batches: cg.config.Fetch.Batches, Initial: cg.config.Offsets.Initial}
	return fetch.NewEngine(conf, fetch.Deps{
		Client:        cg.client,
		Consumer:      cg.consumer,
		Log:           cg.log,
		Report:        cg.report,
		Closing:       cg.stopper,
		FeedRetries:   cg.met().feedRetries,
		FeedFallbacks: cg.met().feedFallbacks,
	})
}
