package integration

import (
	"time"
)

// The history of one group on one topic, as the recorder (history_test.go)
// collects it and the checker (history_check_test.go) reads it. Every time in
// it comes from time.Now() of this process, whose monotonic reading makes
// them comparable; reports print them relative to the history's origin.

// hDelivery is one message handed to one instance of the group.
type hDelivery struct {
	instance  int // the test's name for the instance (a ledger consumer id)
	partition int32
	offset    int64
	at        time.Time
	seq       int // order of recording: breaks ties between equal times
}

// offsetWrite is one state of a committed offset node seen by the recorder's
// own ZooKeeper client. Watches coalesce: a gap in versions means sets that
// were not seen one by one. kazoo does not expose the node's czxid, so a
// re-creation shows only as a version that restarts lower (or as a seen
// deletion, where the node is absent).
type offsetWrite struct {
	partition int32
	value     int64 // -1 when the node is absent
	version   int32 // -1 when the node is absent
	at        time.Time
}

func (w offsetWrite) deleted() bool { return w.version < 0 }

// allPartitionsReset is the partition of an offsetReset that covers every
// partition of the topic.
const allPartitionsReset = int32(-1)

// offsetReset is a reset of committed offsets the test performed (or is
// about to perform: it is noted just before the ZooKeeper write).
type offsetReset struct {
	partition int32 // allPartitionsReset for all of them
	value     int64 // the new committed offset; -1 when the nodes are deleted
	at        time.Time
}

func (r offsetReset) covers(p int32) bool {
	return r.partition == allPartitionsReset || r.partition == p
}

// faultSpan is a fault the test injected, from start to end; a zero end is a
// fault never ended, which counts as an instant (a crash, say). instances,
// when set, are the instances it hit (a crashed one keeps delivering as a
// zombie after the instant, and what it delivered is redelivered later).
type faultSpan struct {
	name       string
	start, end time.Time
	instances  []int
}

// until returns the end of the fault, its start if it never ended.
func (f faultSpan) until() time.Time {
	if f.end.IsZero() {
		return f.start
	}
	return f.end
}

// ownerSnapshot is one read of the group's registrations and of the owner of
// every partition of the topic; err is set when the read failed.
type ownerSnapshot struct {
	at     time.Time
	ids    []string         // registered instance ids
	owners map[int32]string // partition -> owner instance id (absent: unowned)
	err    error
}

// historyData is everything recorded, in recording order.
type historyData struct {
	origin     time.Time
	topic      string // the group's topic, for an assigned expectation
	partitions int32
	deliveries []hDelivery
	writes     []offsetWrite
	resets     []offsetReset
	faults     []faultSpan
	snapshots  []ownerSnapshot
	leaders    map[int32]int32 // partition -> leader broker, for an assigned expectation
}

// expectation is what a test expects of a history.
type expectation struct {
	// produced holds, per partition, the next offset after the last one
	// produced: every offset in [from[p], produced[p]) must be delivered.
	produced map[int32]int64
	// from holds the first offset to check per partition (default 0).
	from map[int32]int64

	// live lists the instance ids (as registered in ZooKeeper) that must be
	// the registered and owning instances at the end. When nil, liveCount
	// (if > 0) is the number of registered instances expected.
	live      []string
	liveCount int
	// want, when set, is the exact owner of every partition. Otherwise, with
	// assigned, the owners must be what the group's default assignment
	// strategy computes for the registered ids; otherwise the owners must
	// be balanced (partition counts of live instances differ by at most 1).
	want     map[int32]string
	assigned bool
	// within bounds the convergence time, measured from the end of the last
	// fault (from the origin when there was none). Zero: convergence is not
	// checked.
	within time.Duration
	// minRegain is the shortest time in which an instance can get back a
	// partition it lost without committing everything it delivered, and
	// resume exactly where it stopped (see history_overlap_test.go); quicker
	// than that, it never stopped. Default (0) defaultMinRegain, 500 ms.
	minRegain time.Duration
	// drain, in the live recorder, is how long check waits for every
	// produced offset to be delivered before it judges (0: it does not wait).
	drain time.Duration
}
