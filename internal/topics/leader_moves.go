package topics

import "sync"

// LeaderMoves is a Source that also tells of moved leaders: each answer
// of Partitions is compared with the previous one for the same topic, and
// the partitions whose leader changed to a broker (not to -1, no leader)
// go to the function it was made with. The group passes them to its fetch
// engine, which then fetches them from the new leader at once (see
// docs/batch-feed.md, "Leaders and epochs"). A source that does not read
// leaders reports no move.
type LeaderMoves struct {
	Source
	moved func(topic string, leaders map[int32]int32)

	mu   sync.Mutex
	last map[string]map[int32]int32 // by topic: partition → leader, as last answered
}

// WithLeaderMoves returns src telling moved (called from Partitions, so it
// must not block) of the partitions whose leader moved, by partition, each
// with its new leader.
func WithLeaderMoves(src Source, moved func(topic string, leaders map[int32]int32)) *LeaderMoves {
	return &LeaderMoves{Source: src, moved: moved, last: make(map[string]map[int32]int32)}
}

// Partitions implements Source, telling of moved leaders. A leader not
// read this time (LeaderNotRead) is neither a move nor forgotten: the
// last one read is kept to compare the next read with.
func (l *LeaderMoves) Partitions(topic string, want Leaders) ([]Partition, error) {
	parts, err := l.Source.Partitions(topic, want)
	if err != nil {
		return parts, err
	}
	now := make(map[int32]int32, len(parts))
	var moved map[int32]int32
	l.mu.Lock()
	prev, known := l.last[topic]
	for _, p := range parts {
		was, ok := prev[p.ID]
		if p.Leader == LeaderNotRead {
			if ok {
				now[p.ID] = was
			}
			continue
		}
		now[p.ID] = p.Leader
		if known && ok && p.Leader >= 0 && p.Leader != was {
			if moved == nil {
				moved = make(map[int32]int32)
			}
			moved[p.ID] = p.Leader
		}
	}
	l.last[topic] = now
	l.mu.Unlock()
	if len(moved) > 0 {
		l.moved(topic, moved)
	}
	return parts, nil
}

// Forget passes the loop's resync on to the source, when it keeps values
// known from its watches (ZooKeeperSource.Forget).
func (l *LeaderMoves) Forget() {
	if f, ok := l.Source.(interface{ Forget() }); ok {
		f.Forget()
	}
}
