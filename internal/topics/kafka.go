package topics

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// KafkaDeps is what a KafkaSource needs from its group.
type KafkaDeps struct {
	// Fetch asks Kafka for the metadata of topics: one metadata request,
	// answered by one broker (SaramaMetadata.Fetch).
	Fetch func(topics []string) (*sarama.MetadataResponse, error)
	// Release closes what Fetch uses; Close calls it. May be nil.
	Release func()
	// Log hears of every failed refresh and of answers held back.
	Log *slog.Logger
	// Report hears of the first failed refresh in a row and every tenth.
	Report func(error)
}

// KafkaSource reads the subscribed topics' partitions and leaders from
// Kafka's metadata, for clusters that no longer write them to ZooKeeper.
// Kafka has no watches: a goroutine asks every interval and fires Changed
// only when the answer differs from the previous one, so a quiet cluster
// costs one metadata request per interval and no ZooKeeper read.
// Partitions answers from the last answer, without a request. A failed
// request keeps the last answer: the assignment may then lag behind the
// cluster, which the claims make safe (an instance claims a partition only
// after its previous owner released it). An answer that takes partitions
// away (a topic missing, fewer partitions) counts only once the next answer
// repeats it: see confirmLosses.
type KafkaSource struct {
	deps     KafkaDeps
	topics   []string
	leaders  bool
	interval time.Duration

	mu       sync.Mutex
	snapshot map[string]topicMetadata // the last answer, by topic
	suspect  map[string]topicMetadata // a loss seen once, kept out of snapshot until the next answer repeats it

	wake     chan struct{} // capacity 1: a change not yet read
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	failures int // consecutive failed refreshes; owned by run
}

// topicMetadata is one topic in an answer: its partitions sorted by ID, or
// the error the broker gave for it.
type topicMetadata struct {
	parts []Partition
	err   error
}

func (m topicMetadata) equal(o topicMetadata) bool {
	if (m.err == nil) != (o.err == nil) || m.err != nil && m.err.Error() != o.err.Error() {
		return false
	}
	return slices.Equal(m.parts, o.parts)
}

// NewKafka asks Kafka for the metadata of topics once, and returns the
// error when it cannot (without calling deps.Release); otherwise it starts
// the goroutine that asks again every interval, which Close stops. leaders
// says whether the partitions carry their leaders.
func NewKafka(deps KafkaDeps, topics []string, leaders bool, interval time.Duration) (*KafkaSource, error) {
	k := &KafkaSource{
		deps:     deps,
		topics:   slices.Clone(topics),
		leaders:  leaders,
		interval: interval,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if _, err := k.refresh(); err != nil {
		return nil, err
	}
	go k.run()
	return k, nil
}

// Changed implements Source: an answer differed from the previous one.
func (k *KafkaSource) Changed() <-chan struct{} { return k.wake }

// Close implements Source: it stops the refresh goroutine and releases
// what Fetch uses.
func (k *KafkaSource) Close() {
	k.stopOnce.Do(func() {
		close(k.stop)
		// Releasing the client first fails a request in flight at once, so
		// a broker that does not answer cannot hold Close up.
		if k.deps.Release != nil {
			k.deps.Release()
		}
		<-k.done
	})
}

// run refreshes every interval until Close.
func (k *KafkaSource) run() {
	defer close(k.done)
	tick := time.NewTicker(k.interval)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		changed, err := k.refresh()
		switch {
		case err != nil:
			k.failures++
			k.deps.Log.Warn("reading topic metadata from Kafka failed; keeping the last answer", "err", err, "failures", k.failures)
			if k.failures == 1 || k.failures%10 == 0 {
				k.deps.Report(err)
			}
		case changed:
			k.failures = 0
			select {
			case k.wake <- struct{}{}:
			default:
			}
		default:
			k.failures = 0
		}
	}
}

// refresh asks Kafka once and stores the answer. It reports whether the
// answer differs from the previous one.
func (k *KafkaSource) refresh() (bool, error) {
	resp, err := k.deps.Fetch(k.topics)
	if err != nil {
		return false, fmt.Errorf("topic metadata from Kafka: %w", err)
	}
	snap := make(map[string]topicMetadata, len(k.topics))
	for _, t := range resp.Topics {
		if slices.Contains(k.topics, t.Name) {
			snap[t.Name] = k.parse(t)
		}
	}
	for _, name := range k.topics {
		if _, ok := snap[name]; !ok { // not in the answer: as unknown
			snap[name] = topicMetadata{err: &MissingTopicError{sarama.ErrUnknownTopicOrPartition}}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.confirmLosses(snap)
	changed := k.snapshot != nil && !maps.EqualFunc(k.snapshot, snap, topicMetadata.equal)
	k.snapshot = snap
	return changed, nil
}

// confirmLosses keeps the previous answer for a topic that snap shows
// missing, or with fewer partitions, until a second answer in a row says
// the same. Brokers update their metadata independently, and one that was
// just restarted or is behind answers from an empty or old cache; a single
// such answer would make this instance stop and release partitions that
// still exist, and claim them again at the next refresh. Kafka never
// removes partitions from a topic, so a real loss (a deleted topic) is
// repeated by the next answer. The caller holds mu.
func (k *KafkaSource) confirmLosses(snap map[string]topicMetadata) {
	for name, m := range snap {
		prev, known := k.snapshot[name]
		if !known || !loses(prev, m) {
			delete(k.suspect, name)
			continue
		}
		if seen, ok := k.suspect[name]; ok && seen.equal(m) {
			delete(k.suspect, name) // confirmed
			continue
		}
		if k.suspect == nil {
			k.suspect = make(map[string]topicMetadata)
		}
		k.suspect[name] = m
		snap[name] = prev
		k.deps.Log.Info("metadata answer drops partitions of a topic; waiting for the next answer to confirm it",
			"topic", name, "partitions", len(prev.parts), "now", len(m.parts), "err", m.err)
	}
}

// loses reports whether next takes partitions away from prev: the topic
// missing, or fewer partitions.
func loses(prev, next topicMetadata) bool {
	if prev.err != nil {
		return false
	}
	var mt *MissingTopicError
	if errors.As(next.err, &mt) {
		return true
	}
	return next.err == nil && len(next.parts) < len(prev.parts)
}

// parse turns one topic of an answer into the partitions the assignment
// uses. A topic Kafka does not know, or whose name it rejects, is missing,
// as it is in ZooKeeper; so is a topic still being created, listed with no
// partition yet.
func (k *KafkaSource) parse(t *sarama.TopicMetadata) topicMetadata {
	switch {
	case errors.Is(t.Err, sarama.ErrUnknownTopicOrPartition), errors.Is(t.Err, sarama.ErrInvalidTopic):
		return topicMetadata{err: &MissingTopicError{t.Err}}
	case t.Err != sarama.ErrNoError && !errors.Is(t.Err, sarama.ErrLeaderNotAvailable):
		return topicMetadata{err: t.Err}
	case len(t.Partitions) == 0:
		var cause error = sarama.ErrUnknownTopicOrPartition
		if t.Err != sarama.ErrNoError {
			cause = t.Err
		}
		return topicMetadata{err: &MissingTopicError{cause}}
	}
	parts := make([]Partition, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		info := Partition{ID: p.ID, Leader: -1}
		if k.leaders && p.Leader >= 0 {
			info.Leader = p.Leader
		}
		parts = append(parts, info)
	}
	slices.SortFunc(parts, func(a, b Partition) int { return cmp.Compare(a.ID, b.ID) })
	return topicMetadata{parts: parts}
}

// Partitions implements Source from the last answer, without a request.
// Every answer carries every leader (when the source reads leaders), so
// want changes nothing.
func (k *KafkaSource) Partitions(topic string, _ Leaders) ([]Partition, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	m, ok := k.snapshot[topic]
	if !ok {
		return nil, fmt.Errorf("topic %q is not subscribed", topic) // unreachable: the loop asks for subscribed topics
	}
	if m.err != nil {
		return nil, m.err
	}
	return slices.Clone(m.parts), nil
}
