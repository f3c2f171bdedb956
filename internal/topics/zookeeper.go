package topics

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zkgroup/kafka/internal/zkwatch"
	"github.com/zkgroup/kafka/kazoo"
)

// ZooKeeper is what ZooKeeperSource reads: one call per znode, with and
// without a watch. Kazoo implements it over package kazoo. A watch channel
// receives one event (or is closed) when its node changes.
type ZooKeeper interface {
	// Partitions returns the IDs of topic's partitions, read from its
	// assignment; an error wrapping kazoo.ErrNoNode when the topic does
	// not exist.
	Partitions(topic string) ([]int32, error)
	// WatchPartitions is Partitions plus a watch on the assignment,
	// returned also with a parse error, so a fix of the node is heard of.
	WatchPartitions(topic string) ([]int32, <-chan kazoo.Event, error)
	// Leader returns the leader in the partition's state node; an error
	// wrapping kazoo.ErrNoNode when the controller has not written it yet.
	Leader(topic string, partition int32) (int32, error)
	// WatchLeader is Leader plus a watch on the state node.
	WatchLeader(topic string, partition int32) (int32, <-chan kazoo.Event, error)
	// WatchTopics watches the list of topics.
	WatchTopics() (<-chan kazoo.Event, error)
	// Generation counts the sessions the connection has held; its change
	// means every watch of the previous session is gone.
	Generation() uint64
}

// ZooKeeperSource reads partitions from each topic's assignment and leaders
// from each partition's state node, watching both, so a change fires
// Changed at once. It owns its watches: each node is watched once until its
// watch fires, and a new session starts a new set.
type ZooKeeperSource struct {
	zk      ZooKeeper
	leaders bool // read (and watch) each partition's leader
	wake    chan struct{}

	mu     sync.Mutex
	gen    uint64       // the session generation ws's watches belong to
	ws     *zkwatch.Set // nil until the first read
	closed bool         // Close was called: sets made from now on are closed
}

// NewZooKeeper returns a source reading zk; leaders says whether it reads
// each partition's leader. It starts nothing: the goroutines it leaves
// waiting on watches end when their watch fires, the connection closes, or
// Close is called.
func NewZooKeeper(zk ZooKeeper, leaders bool) *ZooKeeperSource {
	return &ZooKeeperSource{zk: zk, leaders: leaders, wake: make(chan struct{}, 1)}
}

// Changed implements Source: a watched assignment or state node changed,
// or, while a topic is missing, the list of topics did.
func (z *ZooKeeperSource) Changed() <-chan struct{} { return z.wake }

// Close implements Source: it ends the goroutines waiting on its watches.
func (z *ZooKeeperSource) Close() {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.closed = true
	if z.ws != nil {
		z.ws.Close()
	}
}

// Partitions implements Source, arming the watches not armed yet. It
// reads (and watches) only the leaders want asks for; the others are
// LeaderNotRead. The partition list, like a leader, is read again only once
// its watch fired (zkwatch.KnownRead): a topic of 4,096 partitions is a JSON
// node of tens of KB, which every view read and parsed again.
func (z *ZooKeeperSource) Partitions(topic string, want Leaders) ([]Partition, error) {
	ws := z.watches()
	ids, err := zkwatch.KnownRead(ws, "topic/"+topic,
		func() ([]int32, error) { return z.zk.Partitions(topic) },
		func() ([]int32, <-chan kazoo.Event, error) { return z.zk.WatchPartitions(topic) })
	if errors.Is(err, kazoo.ErrNoNode) {
		// Watch the topic list, so the topic is picked up when it appears.
		if !ws.Armed("topics") {
			if ch, werr := z.zk.WatchTopics(); werr == nil {
				ws.Arm("topics", ch)
			}
		}
		return nil, &MissingTopicError{err}
	}
	if err != nil {
		return nil, err
	}
	parts := make([]Partition, len(ids))
	for i, id := range ids {
		parts[i] = Partition{ID: id, Leader: -1}
		if z.leaders && !want.wants(id) {
			parts[i].Leader = LeaderNotRead
		}
	}
	if !z.leaders {
		return parts, nil
	}
	// A leader asked for is watched: under range-by-leader it is an input
	// of the assignment, so every instance recomputes when one moves and
	// their views agree again at once; for a partition consumed here, its
	// move is passed on to the fetches. Those not known yet are read
	// concurrently: ZooKeeper pipelines the reads on the one session, so a
	// topic's first view costs a few round trips, not one per partition.
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentLeaderReads)
	for i, id := range ids {
		if !want.wants(id) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			leader, err := zkwatch.KnownRead(ws, fmt.Sprintf("state/%s/%d", topic, id),
				func() (int32, error) { return z.zk.Leader(topic, id) },
				func() (int32, <-chan kazoo.Event, error) { return z.zk.WatchLeader(topic, id) })
			if err == nil {
				parts[i].Leader = leader
			} else if !errors.Is(err, kazoo.ErrNoNode) {
				errs[i] = fmt.Errorf("leader of %s/%d: %w", topic, id, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// Forget drops the partition lists known from their watches, keeping the
// watches: the next Partitions reads each list again. The group's loop
// calls it at its resync, so a watch that never fires leaves a list stale
// no longer than that (zkwatch.Set.Forget); leaders stay known.
func (z *ZooKeeperSource) Forget() {
	z.mu.Lock()
	ws := z.ws
	z.mu.Unlock()
	if ws != nil {
		ws.ForgetPrefix("topic/")
	}
}

// maxConcurrentLeaderReads bounds the leader reads of one view in flight at
// once.
const maxConcurrentLeaderReads = 64

// watches returns the watch set of the current session, starting a new one
// when the session was replaced: the old one's watches died with it. A
// read that learned an older generation than the set's (it raced one of
// the new session) keeps the set: generations only grow.
func (z *ZooKeeperSource) watches() *zkwatch.Set {
	gen := z.zk.Generation()
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.ws == nil || gen > z.gen {
		if z.ws != nil {
			z.ws.Close()
		}
		z.ws = zkwatch.New(z.poke)
		z.gen = gen
		if z.closed { // a read abandoned by Close
			z.ws.Close()
		}
	}
	return z.ws
}

func (z *ZooKeeperSource) poke() {
	select {
	case z.wake <- struct{}{}:
	default:
	}
}
