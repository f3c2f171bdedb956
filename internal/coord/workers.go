package coord

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Worker is one partition's worker, as the loop drives it.
type Worker interface {
	// Partition is the partition the worker owns.
	Partition() TopicPartition
	// Stop asks the worker to stop: after a drain and a final commit, or
	// without them (abandon). It does not wait: see Done.
	Stop(abandon bool)
	// Done is closed once the worker, and any predecessor it waited for,
	// has ended.
	Done() <-chan struct{}
	// Claimed is closed once the partition is claimed, or the worker
	// ended first.
	Claimed() <-chan struct{}
	// Opened is closed once the partition's first fetch source is open
	// (its committed offset read, its first fetch under way), or the
	// worker ended first.
	Opened() <-chan struct{}
	// MayHoldNode reports whether an owner node of this session may be
	// left for the partition. Read it after Done.
	MayHoldNode() bool
	// ClaimEnded reports whether a worker that ended on its own did so
	// because its claim ended (lost, or its session gone) rather than
	// because of an error. Read it after its exit was received.
	ClaimEnded() bool
}

// Workers starts workers for the loop.
type Workers interface {
	// Start starts a worker for tp. It waits for prev (nil: none), a
	// predecessor still stopping, before it claims, and sends itself on
	// exited if it ends on its own before it is stopped.
	Start(tp TopicPartition, prev Worker, exited chan<- Worker) Worker
	// SweepOwnerNode starts a stand-in worker that deletes an owner node
	// of this session left for tp. It never claims.
	SweepOwnerNode(tp TopicPartition) Worker
}
