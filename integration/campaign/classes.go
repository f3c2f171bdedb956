package campaign

// Class is a class of anomaly; docs/campaign.md defines each.
type Class string

// The anomaly classes Check looks for.
const (
	// LostWrite: an acknowledged message never delivered, though a later
	// offset of its partition was.
	LostWrite Class = "lost-write"
	// Unseen: an acknowledged message never delivered, nor any later
	// offset of its partition.
	Unseen Class = "unseen"
	// PollSkip: a reader's next delivery under one claim jumps over an
	// offset that exists.
	PollSkip Class = "poll-skip"
	// NonmonotonicPoll: a reader's next delivery under one claim is at or
	// below its previous one.
	NonmonotonicPoll Class = "nonmonotonic-poll"
	// InconsistentOffsets: one offset read (or acknowledged) with two values.
	InconsistentOffsets Class = "inconsistent-offsets"
	// Duplicate: one offset delivered more than once. Tolerated: delivery
	// is at least once.
	Duplicate Class = "duplicate"
	// SplitBrain: the deliveries of two claims of one partition overlap in
	// time.
	SplitBrain Class = "split-brain"
	// ZombieCommit: a commit accepted after a later claim of its partition,
	// written for a claim that claim fenced.
	ZombieCommit Class = "zombie-commit"
	// CommitRegression: a committed offset lower than the one before it,
	// without a reset between.
	CommitRegression Class = "commit-regression"
	// Orphan: a partition without an owner node for longer than
	// Bounds.Orphan.
	Orphan Class = "orphan"
	// HandoffSkip: a claim's first delivery above the offset committed when
	// it was made, over offsets that exist.
	HandoffSkip Class = "handoff-skip"
	// HandoffRewind: a claim's first delivery below the offset committed
	// when it was made, or more than Bounds.Rewind below the highest offset
	// earlier claims delivered.
	HandoffRewind Class = "handoff-rewind"
)

// Classes lists every class, in the order reports print them.
var Classes = []Class{LostWrite, Unseen, PollSkip, NonmonotonicPoll, InconsistentOffsets, Duplicate,
	SplitBrain, ZombieCommit, CommitRegression, Orphan, HandoffSkip, HandoffRewind}

// Tolerated reports whether anomalies of c are allowed by the group's
// promises (at-least-once delivery), so that they do not fail a run.
func (c Class) Tolerated() bool { return c == Duplicate }
