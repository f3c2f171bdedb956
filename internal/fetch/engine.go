package fetch

import (
	"log/slog"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
)

// Config is what fetching needs of the group's configuration.
type Config struct {
	// Config holds the Kafka settings fetches follow: Consumer.Fetch,
	// Consumer.MaxWaitTime, Consumer.Retry, Consumer.Interceptors,
	// Consumer.IsolationLevel, Version, RackID, ChannelBufferSize, Net and
	// MetricRegistry.
	*sarama.Config
	// Batches reads partitions through the batch feed where direct
	// fetches apply (see docs/batch-feed.md, "Where batches come from");
	// otherwise every partition is read through sarama's partition
	// consumer.
	Batches bool
	// Initial is where a negative start offset opens sarama's partition
	// consumer (sarama.OffsetOldest or sarama.OffsetNewest).
	Initial int64
}

// Client is what fetching uses of sarama's client.
type Client interface {
	// Leader returns the partition's leader, as the client knows it now.
	Leader(topic string, partition int32) (*sarama.Broker, error)
	// RefreshMetadata refreshes the metadata of topics (a moved leader).
	RefreshMetadata(topics ...string) error
}

// Consumer opens sarama's partition consumers (sarama.Consumer has it).
type Consumer interface {
	ConsumePartition(topic string, partition int32, offset int64) (sarama.PartitionConsumer, error)
}

// Deps are the group's parts an Engine uses.
type Deps struct {
	Client   Client
	Consumer Consumer
	Log      *slog.Logger
	// Report receives the errors of sarama's partition consumers, and a
	// *FallbackError (inside a *sarama.ConsumerError) for each feed that
	// ended.
	Report func(error)
	// Closing is closed when the group closes: opening a partition
	// consumer stops waiting then (ErrClosing).
	Closing <-chan struct{}
	// FeedRetries counts the batch feed's retried fetches, FeedFallbacks
	// the partitions handed from the batch feed to sarama's partition
	// consumer by a feed error. Nil: not counted.
	FeedRetries, FeedFallbacks metrics.Counter
}

// env is what the round fetchers use of the group: its settings, its
// client and its logger.
type env struct {
	config *Config
	client Client
	log    *slog.Logger
}

// Engine holds what the group's partitions share to fetch: the two round
// fetchers, their shared connections, and the budget of bytes fetched
// ahead. The
// group creates one and closes it once every Source is closed.
type Engine struct {
	env    *env
	deps   Deps
	busy   *roundFetcher // first batches, and the feed's fetches answered at once
	idle   *roundFetcher // the feed's long polls
	budget *feedBudget
	// batchSize is sarama's consumer-batch-size histogram: the messages
	// of each batch the feed passes on, as sarama's partition consumer
	// records each partition's answer.
	batchSize metrics.Histogram
	moves     leaderMoves // the leader moves reported (see LeadersMoved)
}

// NewEngine returns an Engine fetching as conf says, with deps.
func NewEngine(conf Config, deps Deps) *Engine {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Report == nil {
		deps.Report = func(error) {}
	}
	if deps.FeedRetries == nil {
		deps.FeedRetries = metrics.NilCounter{}
	}
	if deps.FeedFallbacks == nil {
		deps.FeedFallbacks = metrics.NilCounter{}
	}
	e := &Engine{env: &env{config: &conf, client: deps.Client, log: deps.Log}, deps: deps}
	e.busy, e.idle = newFetchers(e.env)
	e.budget = newFeedBudget(int64(conf.Consumer.Fetch.MaxBytes))
	e.batchSize = metrics.NilHistogram{}
	if conf.MetricRegistry != nil {
		// sarama's reservoir size and alpha (its metrics.go).
		e.batchSize = metrics.GetOrRegisterHistogram("consumer-batch-size", conf.MetricRegistry, metrics.NewExpDecaySample(1028, 0.015))
	}
	return e
}

// Close stops applying leader moves (without waiting for a metadata
// refresh under way), closes the fetchers' own connections, at once, and
// waits until their rounds are over. Call it once every Source is closed.
func (e *Engine) Close() {
	e.moves.close()
	e.busy.closeConns()
	e.idle.closeConns()
}

// topicPartition names one partition of one topic.
type topicPartition struct {
	topic     string
	partition int32
}
