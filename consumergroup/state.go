package consumergroup

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// GroupState is what one member of a consumer group knows of itself at one
// moment: its session and the partitions it owns. State returns it; it is
// meant for health checks and status pages (see docs/metrics.md).
type GroupState struct {
	// Group is the consumer group's name.
	Group string `json:"group"`
	// InstanceID is this member's registration id; "" while a
	// HandlerGroup runs no session.
	InstanceID string `json:"instance_id"`
	// Session is the member's ZooKeeper session.
	Session SessionState `json:"session"`
	// Partitions are the partitions the member owns, sorted by topic and
	// partition; empty (not nil) when it owns none, and after Close.
	Partitions []PartitionState `json:"partitions"`
}

// SessionState is the state of a member's ZooKeeper session.
type SessionState struct {
	// Status is the session's state: "connecting", "connected",
	// "disconnected", "expired" (being replaced), "closed", or "none"
	// while a HandlerGroup runs no session.
	Status string `json:"status"`
	// Connected: the session is live (Status "connected").
	Connected bool `json:"connected"`
	// Fenced: the session fence holds delivery paused, because the
	// ZooKeeper leader has not vouched for the session lately (see
	// Config.Session.SelfFenceFraction).
	Fenced bool `json:"fenced"`
	// Expirations counts the sessions that expired and were replaced since
	// the member joined; each one dropped every partition.
	Expirations int64 `json:"expirations"`
}

// Healthy reports whether the member can deliver messages: its session is
// connected and not fenced.
func (s SessionState) Healthy() bool { return s.Connected && !s.Fenced }

// PartitionState is what a member knows of one partition it owns. Offsets
// are "next" offsets, as ZooKeeper stores them.
type PartitionState struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// ClaimEpoch is the epoch of this member's claim; every commit and the
	// release are fenced by it.
	ClaimEpoch int32 `json:"claim_epoch"`
	// Committed is the offset last committed (the next to consume), -1
	// when none is stored yet.
	Committed int64 `json:"committed"`
	// Delivered is the offset after the last message handed to the
	// application since the partition was claimed (or last moved by a
	// seek or a reset), -1 when none was.
	Delivered int64 `json:"delivered"`
	// HighWaterMark is the partition's high-water mark as last known, from
	// its fetches or the lag refresh (Config.Metrics.LagInterval); -1 when
	// none is known yet.
	HighWaterMark int64 `json:"high_water_mark"`
	// Lag is HighWaterMark minus Committed, -1 when either is unknown.
	Lag int64 `json:"lag"`
	// LastCommit is when the latest commit that wrote an offset, or
	// failed, ended; zero when none did yet.
	LastCommit time.Time `json:"last_commit"`
	// LastCommitErr is that commit's error; nil when it was written. In
	// JSON it is "last_commit_error", its message, left out when nil.
	LastCommitErr error `json:"-"`
}

// MarshalJSON writes p with LastCommitErr as its message.
func (p PartitionState) MarshalJSON() ([]byte, error) {
	type plain PartitionState // without this method
	out := struct {
		plain
		LastCommitError string `json:"last_commit_error,omitempty"`
	}{plain: plain(p)}
	if p.LastCommitErr != nil {
		out.LastCommitError = p.LastCommitErr.Error()
	}
	return json.Marshal(out)
}

// State returns what the member knows of itself now. It is cheap (no
// request to ZooKeeper or Kafka: every value is one the group keeps
// anyway) and safe to call from any goroutine at any time, also after
// Close, when Partitions is empty.
func (cg *ConsumerGroup) State() GroupState {
	st := GroupState{Group: cg.name, Session: cg.sessionState(), Partitions: []PartitionState{}}
	if cg.instance != nil {
		st.InstanceID = cg.instance.ID
	}
	if cg.closed.Load() || cg.offsetManager == nil {
		return st
	}
	for _, p := range cg.offsetManager.Snapshot() {
		if p.Claim != nil { // not one tracked through InitializePartition
			st.Partitions = append(st.Partitions, partitionState(p))
		}
	}
	slices.SortFunc(st.Partitions, func(a, b PartitionState) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return st
}

// State returns what the running session's member knows of itself now,
// as ConsumerGroup.State does; between sessions (and after Close), the
// group's name with Session.Status "none" and no partitions.
func (g *HandlerGroup) State() GroupState {
	if c := g.group(); c != nil {
		return c.State()
	}
	return GroupState{Group: g.name, Session: SessionState{Status: "none"}, Partitions: []PartitionState{}}
}

// sessionState reads the session's state as package kazoo keeps it from
// go-zookeeper's events, and the fence's gate.
func (cg *ConsumerGroup) sessionState() SessionState {
	if cg.kazoo == nil {
		return SessionState{Status: "none"}
	}
	s, _ := cg.kazoo.Session()
	st := SessionState{
		Status:    s.Status.String(),
		Connected: s.Status == kazoo.SessionConnected,
		Fenced:    cg.gate != nil && cg.gate.Paused(),
	}
	if s.Generation > 1 {
		st.Expirations = int64(s.Generation - 1)
	}
	return st
}

// partitionState is what p's offsets say of an owned partition.
func partitionState(p *offsets.Partition) PartitionState {
	delivered := p.Tracker.LastDelivered()
	if delivered >= 0 {
		delivered++
	}
	last := p.LastCommit()
	return PartitionState{
		Topic:         p.TP.Topic,
		Partition:     p.TP.Partition,
		ClaimEpoch:    p.Claim.Epoch,
		Committed:     max(p.Tracker.CommittedOffset(), -1),
		Delivered:     delivered,
		HighWaterMark: p.HighWaterMark(),
		Lag:           p.Lag(),
		LastCommit:    last.At,
		LastCommitErr: last.Err,
	}
}
