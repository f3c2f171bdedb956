package offsets

import (
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Owner is the one consuming a partition the committer tracks (the
// partition worker). The committer sends it what a commit found, as a
// value, and asks it for the high-water mark the lag metric needs.
type Owner interface {
	// CommitResult tells the owner what a commit found. It must not block:
	// the committer calls it with the partition's commit lock held.
	CommitResult(CommitResult)
	// HighWaterMark returns the partition's high-water mark as last seen;
	// 0 or less: none yet.
	HighWaterMark() int64
}

// CommitResult is what a commit found that the partition's owner acts on:
// the claim lost, or the stored offset moved underneath.
type CommitResult struct {
	// Lost: the claim ended (the epoch moved); the owner stops without
	// committing.
	Lost bool
	// Moved: the stored offset changed underneath (a conflict); the owner
	// seeks to Stored before it delivers again.
	Moved  bool
	Stored int64
}

// Partition is the offset state of one partition this instance consumes:
// its Tracker, the claim its commits are fenced by, and what the stores
// hold for it.
type Partition struct {
	TP      TopicPartition
	Tracker *Tracker
	Claim   *kazoo.PartitionClaim // nil: unfenced (InitializePartition)
	// Pause is the application's pause of this claim.
	Pause Pause
	owner Owner // nil: no owner to seek or stop

	commitMu sync.Mutex // serialises commits and restarts of this partition
	version  int32      // version of the offset node we last read or wrote; -1: none
	inDoubt  InDoubt    // commits whose reply was lost; guarded by commitMu

	// maxOffered is the highest offset offered to the application from the
	// current position (-1: none yet); a mark above it cannot be genuine (it
	// comes from before a seek) and is ignored. Not enforced without an owner.
	maxOffered atomic.Int64
	// offeredBeforeRestart is the highest offset offered from earlier
	// positions of this claim (-1: none): with maxOffered, the highest the
	// claim ever offered. Written under commitMu.
	offeredBeforeRestart atomic.Int64
	redelivery           Redelivery  // after a backward seek: marks must name the redelivered message
	seeking              atomic.Bool // a restart is pending: ignore marks, do not commit
	// recalls counts the starts and ends of recalls, and recalling how
	// many run (do not commit while any does): the worker's own, and a
	// take-back from a buffer shared with other partitions, which may run
	// beside it. A commit reads both before the position and recalls
	// after it, and commits only if no recall ran in between.
	recalls   atomic.Uint64
	recalling atomic.Int64
	lost      atomic.Bool // the epoch moved: never commit again
	kafka     kafkaState  // what Kafka holds, with Kafka in the storage
	// deliveries tells this claim's messages from earlier claims' (nil:
	// a Partition not adopted by a Committer).
	deliveries *claimDeliveries
	watch      partitionWatch
}

// Offer records that offset is about to be handed to the application: from
// then on a mark of it is genuine.
func (o *Partition) Offer(offset int64) {
	if offset > o.maxOffered.Load() {
		o.maxOffered.Store(offset)
	}
}

// OfferMessage records m in the redelivery window (see Redelivery.Offered)
// and as this claim's delivery (see claimDeliveries).
func (o *Partition) OfferMessage(m *sarama.ConsumerMessage) {
	o.redelivery.Offered(m)
	if o.deliveries != nil {
		o.deliveries.Offered(m)
	}
}

// DeliveredUnderClaim reports whether m was handed out (or about to be)
// under o's claim, rather than under an earlier claim of the partition
// here; false for a Partition not adopted by a Committer.
func (o *Partition) DeliveredUnderClaim(m *sarama.ConsumerMessage) bool {
	return o.deliveries != nil && o.deliveries.Delivered(m, o.highestOffered())
}

// highestOffered returns the highest offset the claim offered since it
// was adopted, -1 when none.
func (o *Partition) highestOffered() int64 {
	return max(o.maxOffered.Load(), o.offeredBeforeRestart.Load())
}

// Delivered records that the application took offset: Drain waits for it.
func (o *Partition) Delivered(offset int64) {
	o.Tracker.Delivered(offset)
}

// Lost reports whether the claim was seen to end: nothing is committed
// any more.
func (o *Partition) Lost() bool { return o.lost.Load() }

// SetLost records that the claim ended (the claim watch saw it).
func (o *Partition) SetLost() { o.lost.Store(true) }

// Seeking reports whether a seek to a stored offset is pending: marks are
// ignored and nothing is committed until the owner restarts there.
func (o *Partition) Seeking() bool { return o.seeking.Load() }

// SetSeeking records that a seek to a stored offset is pending (a conflict
// does so before it tells the owner).
func (o *Partition) SetSeeking() { o.seeking.Store(true) }

// Mark marks the message m at offset (m nil: a mark by offset only).
func (o *Partition) Mark(m *sarama.ConsumerMessage, offset int64) bool {
	gen := o.Tracker.Generation() // before the checks: a restart after them refuses the mark
	if o.seeking.Load() || o.lost.Load() {
		return false
	}
	if o.owner != nil && offset > o.maxOffered.Load() {
		return false
	}
	if !o.redelivery.Allows(m, offset) {
		return false
	}
	return o.Tracker.MarkOffsetAt(offset, gen)
}

// Rewind moves the mark back to next, the next offset to consume (a
// session's ResetOffset): committed at the next commit although lower than
// what is stored. Refused while a restart is pending or after the claim
// was lost, and for a next above the current mark.
func (o *Partition) Rewind(next int64) bool {
	if o.seeking.Load() || o.lost.Load() {
		return false
	}
	return o.Tracker.Rewind(next)
}

// Restart moves the partition to offset (negative: none stored, start at
// Offsets.Initial), dropping pending marks, and ends a pending seek.
// Called by the owner.
func (o *Partition) Restart(offset int64) {
	o.restartWith(func() int64 { o.Tracker.Reset(offset); return offset })
	o.seeking.Store(false)
}

// RestartUncommitted moves the partition to offset, a position not stored
// yet, which the next commit writes even if nothing is marked. A seek
// that is pending stays pending: the offset the seek adopts wins over this
// one.
func (o *Partition) RestartUncommitted(offset int64) {
	o.restartWith(func() int64 { o.Tracker.ResetUncommitted(offset); return offset })
}

// RestartUncommittedUnlessRewind is RestartUncommitted(offset), unless the
// committed offset is above offset: a lower offset is stored only as a
// reset is (Store.RewindAsReset), and it reports false. The check and the
// move hold the commit lock, so no commit of a higher offset (a mark of a
// message delivered before) goes in between.
func (o *Partition) RestartUncommittedUnlessRewind(offset int64) bool {
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	if o.Tracker.CommittedOffset() > offset {
		return false
	}
	o.restartLocked(func() int64 { o.Tracker.ResetUncommitted(offset); return offset })
	return true
}

// restartWith moves the partition's position with move, which resets the
// tracker (a new generation) and returns the new position, and opens the
// redelivery window from there to the highest offset offered so far. It
// holds the commit lock, so no commit runs in between, and returns the
// new position.
func (o *Partition) restartWith(move func() int64) int64 {
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	return o.restartLocked(move)
}

// restartLocked is restartWith with the commit lock held.
func (o *Partition) restartLocked(move func() int64) int64 {
	far := o.maxOffered.Load()
	if far > o.offeredBeforeRestart.Load() {
		o.offeredBeforeRestart.Store(far) // before maxOffered drops it
	}
	to := move()
	o.redelivery.Restart(to, far)
	o.maxOffered.Store(-1)
	return to
}

// BeginRecall stops commits of o until EndRecall. It does not wait for a
// commit in flight (one may hang while ZooKeeper is silent, which is when
// the worker must empty its buffer at once): a commit reads the position
// between two reads of o.recalls (see PendingOutsideRecall), so one that
// goes ahead read its position while no recall ran, and stores only marks
// of messages the application got before one began.
// Recalls may overlap (they nest): commits resume once the last ends.
func (o *Partition) BeginRecall() {
	o.recalling.Add(1)
	o.recalls.Add(1)
}

// EndRecall ends what one BeginRecall began.
func (o *Partition) EndRecall() {
	o.recalls.Add(1)
	o.recalling.Add(-1)
}

// PendingOutsideRecall returns the tracker's pending position, and ok
// false when a recall ran during any part of the read: a recall that
// began and ended meanwhile may have capped the position below what was
// read.
func (o *Partition) PendingOutsideRecall() (next int64, dirty, ok bool) {
	before := o.recalls.Load()
	running := o.recalling.Load()
	next, dirty = o.Tracker.Pending()
	return next, dirty, running == 0 && o.recalls.Load() == before
}

// RestartAtMark restarts the partition at its marked position, but not
// above below, the lowest offset taken back from the buffer (negative:
// none): every message delivered and not marked yet is delivered again,
// and marks of messages delivered before are refused (see Redelivery).
// Nothing stored moves. It returns the position, where the worker fetches
// from next. Called by the worker between BeginRecall and EndRecall.
func (o *Partition) RestartAtMark(below int64) int64 {
	return o.restartWith(func() int64 { return o.Tracker.RestartAtMark(below) })
}

// markLost records that o's claim ended (the epoch moved) and tells its
// owner. Called with o.commitMu held.
func (o *Partition) markLost() {
	o.lost.Store(true)
	if o.owner != nil {
		o.owner.CommitResult(CommitResult{Lost: true})
	}
}

// lag returns the partition's lag behind next, or -1 when its high-water
// mark is unknown.
func (o *Partition) lag(next int64) int64 {
	if hwm := o.HighWaterMark(); hwm > 0 {
		return max(hwm-next, 0)
	}
	return -1
}

// TestCommitLocker returns the lock a commit of o holds, for tests of its
// owner that hold it as a commit in flight would.
func (o *Partition) TestCommitLocker() sync.Locker { return &o.commitMu }
