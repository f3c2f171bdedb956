package fetch

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// feedRetryLimit is how many retries in a row, with nothing fetched in
// between, a batch feed makes before it ends with the error (the partition
// then falls back to sarama's partition consumer). See docs/batch-feed.md,
// "Retries".
const feedRetryLimit = 20

// feedRetry is how a batch feed retries a fetch that failed with an error
// retrying mends (see retriableFeedError): wait the consumer's retry
// backoff, refresh the partition's metadata (its leader may have moved),
// and fetch again at the same offset. It belongs to one feed's goroutine.
type feedRetry struct {
	// refresh refreshes the metadata of the feed's topic (a moved leader).
	refresh func()
	// backoff is the wait before retry number retries (from 1), as
	// sarama's partition consumer waits (Consumer.Retry.Backoff, or
	// Consumer.Retry.BackoffFunc when set).
	backoff func(retries int) time.Duration
	// limit is how many retries in a row are made before giving up.
	limit int
	// retried, when set, is called at every retry (the group's
	// zkgroup-feed-retries metric).
	retried func()
	// positions, when set, explains an offset out of range at a
	// position read through (see readPositions).
	positions *readPositions
	// moved, when set, returns a channel closed once the next leader move
	// of the topic is applied to the client's metadata: the backoff ends
	// then, without a refresh of its own (see Engine.LeadersMoved).
	moved func() <-chan struct{}

	failed int // retries in a row without a successful fetch
}

// newFeedRetry returns the retry policy of a feed of topic in a group
// with client and conf.
func newFeedRetry(client Client, conf *sarama.Config, topic string) *feedRetry {
	return &feedRetry{
		refresh: func() { _ = client.RefreshMetadata(topic) },
		backoff: retryBackoff(conf),
		limit:   feedRetryLimit,
	}
}

// retryBackoff returns the consumer's retry backoff as a function of the
// retry number: Consumer.Retry.BackoffFunc when set, otherwise
// Consumer.Retry.Backoff.
func retryBackoff(conf *sarama.Config) func(int) time.Duration {
	if f := conf.Consumer.Retry.BackoffFunc; f != nil {
		return f
	}
	d := conf.Consumer.Retry.Backoff
	return func(int) time.Duration { return d }
}

// again reports whether the feed fetches again after a fetch that failed
// with err: err is one retrying mends and fewer than limit retries in a
// row failed already. It waits the backoff and refreshes the metadata
// first, or less when a leader move of the topic is applied meanwhile; the
// first FENCED_LEADER_EPOCH of a series is retried after a refresh alone. It
// returns false, early, when ctx ends: a stop never waits out a backoff. A
// nil feedRetry never retries.
func (r *feedRetry) again(ctx context.Context, err error) bool {
	if r == nil || !retriableFeedError(err) || r.failed >= r.limit {
		return false
	}
	r.failed++
	if r.retried != nil {
		r.retried()
	}
	if r.failed == 1 && errors.Is(err, sarama.ErrFencedLeaderEpoch) {
		// The leader has a newer epoch than our metadata (a replica set
		// changed, or a move the topic source did not see): a refresh
		// mends it now, and waiting the backoff first would only delay.
		r.refresh()
		return ctx.Err() == nil
	}
	var moved <-chan struct{}
	if r.moved != nil {
		moved = r.moved()
	}
	woken, live := sleepOrWake(ctx, r.backoff(r.failed), moved)
	if !live {
		return false
	}
	if !woken {
		r.refresh()
	}
	return ctx.Err() == nil
}

// succeeded notes a fetch that answered without error, read through to
// position (-1: the answer did not say): the next failure starts a new
// series of retries.
func (r *feedRetry) succeeded(position int64) {
	if r != nil {
		r.failed = 0
		r.positions.reach(position)
	}
}

// explain returns what err, the answer to a fetch at position, means (see
// readPositions.explain). A nil feedRetry explains nothing.
func (r *feedRetry) explain(ctx context.Context, position int64, err error) error {
	if r == nil || err == nil {
		return err
	}
	return r.positions.explain(ctx, position, err)
}

// retriableFeedErrors are the broker's partition errors that a metadata
// refresh and a new fetch mend: the leader moved or is being elected, a
// replica is behind, the request timed out. sarama's partition consumer
// redispatches on the same ones.
var retriableFeedErrors = []sarama.KError{
	sarama.ErrUnknownTopicOrPartition,
	sarama.ErrNotLeaderForPartition,
	sarama.ErrLeaderNotAvailable,
	sarama.ErrReplicaNotAvailable,
	sarama.ErrFencedLeaderEpoch,
	sarama.ErrUnknownLeaderEpoch,
	sarama.ErrRequestTimedOut,
	sarama.ErrNotEnoughReplicas,
	sarama.ErrNotEnoughReplicasAfterAppend,
	sarama.ErrBrokerNotAvailable,
	sarama.ErrNetworkException,
	sarama.ErrKafkaStorageError,
	sarama.ErrOffsetNotAvailable,
}

// retriableFeedError reports whether a feed's fetch that failed with err
// may succeed when tried again after a metadata refresh: a partition error
// of retriableFeedErrors, an offset out of range the log holds after all
// (errStaleOutOfRange), a broken, refused or timed-out connection, or no
// leader or broker known (client.Leader failing). Everything else, among
// them sarama.ErrOffsetOutOfRange (the caller decides where to go),
// errNoRecordsBelowMark, errPartialBatch, errLegacyMessageSet and errors
// not known here, is left to sarama's partition consumer.
func retriableFeedError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errStaleOutOfRange) {
		return true
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		for _, r := range retriableFeedErrors {
			if kerr == r {
				return true
			}
		}
		return false
	}
	if connectionClosed(err) {
		return true
	}
	for _, target := range []error{
		sarama.ErrOutOfBrokers, sarama.ErrNotConnected, sarama.ErrBrokerNotFound, syscall.ECONNREFUSED,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}
