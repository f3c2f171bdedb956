package consumergroup

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

// topicSource is where the manage loop reads the subscribed topics'
// partitions and their leaders: ZooKeeper, whose nodes it watches
// (zookeeperTopics, upstream's way), or Kafka, whose metadata it polls
// (kafkaTopics, for clusters that no longer keep metadata in ZooKeeper).
// Both give the same answer for the same cluster, so instances reading
// either agree on the assignment.
type topicSource interface {
	// partitions returns topic's partitions, each with its leader when the
	// source reads leaders (-1 otherwise, and for a partition without a
	// leader). For a topic that does not exist it returns a
	// *missingTopicError, and the loop is woken when the topic appears.
	// Watches it arms go into ws.
	partitions(ws *watchSet, topic string) ([]PartitionInfo, error)

	// changed receives a value when the metadata changed in a way no watch
	// of ws reports; nil for a source that only arms watches.
	changed() <-chan struct{}

	// close stops the source's background work, if any.
	close()
}

// openTopicSource sets cg.topicSrc: Kafka's metadata when Kafka.Brokers is
// set, otherwise ZooKeeper. The Kafka source asks once before it returns,
// so a join fails at once when Kafka cannot answer.
func (cg *ConsumerGroup) openTopicSource() error {
	leaders := cg.config.Assignment.Strategy == StrategyRangeByLeader
	if len(cg.config.Kafka.Brokers) == 0 {
		cg.topicSrc = &zookeeperTopics{kz: cg.kazoo, leaders: leaders}
		return nil
	}
	if cg.filter != nil {
		// The topic list a pattern is matched against still comes from
		// ZooKeeper, which a KRaft cluster leaves empty.
		return fmt.Errorf("consumergroup: Kafka.Brokers is not supported with JoinConsumerGroupPattern yet; list the topics with JoinConsumerGroup")
	}
	meta, err := newSaramaMetadata(cg.config.Kafka.Brokers, cg.config.Config)
	if err != nil {
		return fmt.Errorf("consumergroup: connect to Kafka at %v for metadata: %w", cg.config.Kafka.Brokers, err)
	}
	src, err := newKafkaTopics(meta.fetch, cg.topics, leaders, cg.config.Kafka.RefreshInterval, cg.log, cg.report)
	if err != nil {
		_ = meta.close()
		return fmt.Errorf("consumergroup: %w", err)
	}
	src.release = func() { _ = meta.close() }
	cg.topicSrc = src
	return nil
}

// missingTopicError says a subscribed topic does not exist (yet). It
// unwraps to the source's own error: kazoo.ErrNoNode from ZooKeeper,
// sarama.ErrUnknownTopicOrPartition from Kafka.
type missingTopicError struct{ err error }

func (e *missingTopicError) Error() string { return e.err.Error() }
func (e *missingTopicError) Unwrap() error { return e.err }

// zookeeperTopics reads partitions from /brokers/topics/<topic> and leaders
// from each partition's state node, watching both, so a change wakes the
// loop at once.
type zookeeperTopics struct {
	kz      *kazoo.Kazoo
	leaders bool // read (and watch) each partition's leader
}

func (z *zookeeperTopics) changed() <-chan struct{} { return nil }
func (z *zookeeperTopics) close()                   {}

func (z *zookeeperTopics) partitions(ws *watchSet, topic string) ([]PartitionInfo, error) {
	t := z.kz.Topic(topic)
	parts, err := watchedRead(ws, "topic/"+topic, t.Partitions, t.WatchPartitions)
	if errors.Is(err, kazoo.ErrNoNode) {
		// Watch the topic list, so the topic is picked up when it appears.
		if !ws.isArmed("topics") {
			if _, ch, werr := z.kz.WatchTopics(); werr == nil {
				ws.arm("topics", ch)
			}
		}
		return nil, &missingTopicError{err}
	}
	if err != nil {
		return nil, err
	}
	infos := make([]PartitionInfo, len(parts))
	for i, p := range parts {
		infos[i] = PartitionInfo{ID: p.ID, Leader: -1}
	}
	if !z.leaders {
		return infos, nil
	}
	// Leaders are an input of the assignment: watch them, so every
	// instance recomputes when one moves and their views agree again at
	// once. Those not known yet are read concurrently: ZooKeeper pipelines
	// the reads on the one session, so a topic's first view costs a few
	// round trips, not one per partition.
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentLeaderReads)
	for i, p := range parts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			leader, err := readLeader(ws, p)
			if err == nil {
				infos[i].Leader = leader
			} else if !errors.Is(err, kazoo.ErrNoNode) {
				errs[i] = fmt.Errorf("leader of %s/%d: %w", topic, p.ID, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// maxConcurrentLeaderReads bounds the leader reads of one view in flight at
// once.
const maxConcurrentLeaderReads = 64

// readLeader reads a partition's leader, arming a watch on its state node
// unless one is armed already; while it is, the leader read with it is
// returned without a read (see knownRead).
func readLeader(ws *watchSet, p *kazoo.Partition) (int32, error) {
	state, err := knownRead(ws, fmt.Sprintf("state/%s/%d", p.Topic().Name, p.ID), p.State, p.WatchState)
	if err != nil {
		return -1, err
	}
	return state.Leader, nil
}
