package fetch

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Leader moves: the group's topic source hears of a moved leader at once
// (ZooKeeper's watch on the partition state) or within its refresh interval
// (Kafka's metadata), while the fetches learn of it only from an error, or,
// when none comes, from sarama's background refresh. LeadersMoved closes
// that gap: it refreshes the client's metadata for the topic and moves the
// fetches queued for, or in flight to, the old leader to the new one. See
// docs/batch-feed.md, "Leaders and epochs".

const (
	// moveRefreshes is how many metadata refreshes a reported move gets
	// before it is applied whatever the client says: the broker answering
	// may not have heard of the move yet (ZooKeeper's watch can fire
	// before the controller told the brokers).
	moveRefreshes = 8
	// moveRefreshDelay is the wait after a refresh that found the client
	// behind, doubled after each, up to maxMoveRefreshDelay: about 1.3 s
	// for all of them.
	moveRefreshDelay    = 20 * time.Millisecond
	maxMoveRefreshDelay = 320 * time.Millisecond
)

// leaderMoves holds the moves reported and not applied yet, and the
// goroutine that applies them. Its zero value is ready: the goroutine
// starts with the first report, and Engine.Close stops it.
type leaderMoves struct {
	mu      sync.Mutex
	pending map[string]map[int32]int32 // by topic: partition → the leader the source names
	applied map[string]chan struct{}   // by topic: closed when its next move is applied
	wake    chan struct{}              // capacity 1: pending grew
	stop    chan struct{}
	done    chan struct{}
	started bool
	stopped bool
}

// LeadersMoved tells the engine that the leaders of topic's partitions
// moved, to the brokers leaders names (by partition). It does not wait:
// in the background the client's metadata for topic is refreshed (unless
// it names those leaders already), every fetch of the topic whose
// partition the client now names another leader for is sent again to it,
// and feeds waiting out a retry's backoff on the topic fetch again at
// once. The group's topic source calls it (topics.WithLeaderMoves).
func (e *Engine) LeadersMoved(topic string, leaders map[int32]int32) {
	m := &e.moves
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || len(leaders) == 0 {
		return
	}
	if m.pending == nil {
		m.pending = make(map[string]map[int32]int32)
	}
	if m.pending[topic] == nil {
		m.pending[topic] = make(map[int32]int32, len(leaders))
	}
	for p, l := range leaders {
		m.pending[topic][p] = l
	}
	if !m.started {
		m.started = true
		m.wake, m.stop, m.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go e.applyLeaderMoves()
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// nextMove returns a channel closed once the next move of topic reported
// to LeadersMoved is applied.
func (m *leaderMoves) nextMove(topic string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied = make(map[string]chan struct{})
	}
	ch, ok := m.applied[topic]
	if !ok {
		ch = make(chan struct{})
		m.applied[topic] = ch
	}
	return ch
}

// close stops the goroutine applying moves; later reports are ignored.
// It does not wait: a metadata refresh under way (sarama's takes no
// context, and a hung broker holds it for the read timeout) would hold up
// the group's Close. The goroutine ends once the refresh returns, within
// Net.ReadTimeout. Closing again does nothing.
func (m *leaderMoves) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stopped && m.started {
		close(m.stop)
	}
	m.stopped = true
}

// applyLeaderMoves applies the reported moves until Close: the topics
// whose moved partitions the client names other leaders for than the
// source are refreshed (one metadata request for all of them), up to
// moveRefreshes times; then each topic's fetches are moved (see
// roundFetcher.followMoves) and its feeds in a retry's backoff woken.
func (e *Engine) applyLeaderMoves() {
	m := &e.moves
	defer close(m.done)
	tries := make(map[string]int)
	delay := moveRefreshDelay
	for {
		topics, moves := m.snapshot()
		if len(topics) == 0 {
			delay = moveRefreshDelay
			select {
			case <-m.stop:
				return
			case <-m.wake:
				continue
			}
		}
		var stale []string
		for _, t := range topics {
			if !e.clientNames(t, moves[t]) {
				stale = append(stale, t)
			}
		}
		if len(stale) > 0 {
			err := e.env.client.RefreshMetadata(stale...)
			e.env.log.Debug("leaders moved: metadata refreshed", "topics", stale, "err", err)
			if m.closed() {
				return
			}
		}
		for _, t := range topics {
			tries[t]++
			agrees := !slices.Contains(stale, t) || e.clientNames(t, moves[t])
			if agrees || tries[t] >= moveRefreshes {
				e.env.log.Debug("leaders moved: fetching from the leaders the client names", "topic", t,
					"moved", moves[t], "rounds", tries[t], "agrees", agrees)
				delete(tries, t)
				e.applyMove(t, moves[t])
			}
		}
		if m.anyPending() {
			if !sleepUntil(m.stop, delay) {
				return
			}
			delay = min(2*delay, maxMoveRefreshDelay)
		}
	}
}

// snapshot returns the topics with moves pending, sorted, and a copy of
// those moves.
func (m *leaderMoves) snapshot() ([]string, map[string]map[int32]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	topics := make([]string, 0, len(m.pending))
	moves := make(map[string]map[int32]int32, len(m.pending))
	for t, leaders := range m.pending {
		topics = append(topics, t)
		moves[t] = maps.Clone(leaders)
	}
	slices.Sort(topics)
	return topics, moves
}

// closed reports whether close was called.
func (m *leaderMoves) closed() bool {
	select {
	case <-m.stop:
		return true
	default:
		return false
	}
}

// anyPending reports whether a move is still to be applied.
func (m *leaderMoves) anyPending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending) > 0
}

// clientNames reports whether the client's metadata names, for each
// partition of topic in leaders, the leader leaders gives.
func (e *Engine) clientNames(topic string, leaders map[int32]int32) bool {
	for p, want := range leaders {
		b, _, err := leaderAndEpoch(e.env.client, topic, p)
		if err != nil || b.ID() != want {
			return false
		}
	}
	return true
}

// applyMove moves the fetches of topic to the leaders the client names
// now, forgets the moves of leaders that no later report replaced, and
// wakes whoever waits on nextMove(topic).
func (e *Engine) applyMove(topic string, leaders map[int32]int32) {
	e.busy.followMoves(topic)
	e.idle.followMoves(topic)
	m := &e.moves
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, l := range leaders {
		if m.pending[topic][p] == l {
			delete(m.pending[topic], p)
		}
	}
	if len(m.pending[topic]) == 0 {
		delete(m.pending, topic)
	}
	if ch, ok := m.applied[topic]; ok {
		close(ch)
		delete(m.applied, topic)
	}
}

// sleepUntil waits d, or less when stop is closed first; it reports
// whether stop is still open.
func sleepUntil(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}
