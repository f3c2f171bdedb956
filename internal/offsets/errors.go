package offsets

import (
	"errors"
	"fmt"
)

// ConflictError reports a commit refused because the partition's stored
// offset changed underneath while this instance still owned it (an
// operator reset it, say). The committer resolved the conflict: it dropped
// the pending marks and the owner resumes consuming at Stored. Err is the
// registry's error (it matches kazoo.ErrOffsetConflict with errors.Is).
type ConflictError struct {
	Topic     string
	Partition int32
	Pending   int64 // the next offset this instance was about to commit
	Stored    int64 // the next offset found in ZooKeeper, where consumption resumes
	Err       error
}

// Error names the partition, both offsets and the registry's error.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("consumergroup: offset of %s/%d changed underneath: stored %d, pending %d dropped; resuming at %d: %v",
		e.Topic, e.Partition, e.Stored, e.Pending, e.Stored, e.Err)
}

// Unwrap returns the registry's error.
func (e *ConflictError) Unwrap() error { return e.Err }

// ErrGroupClosing ends a call to Kafka that Close stopped waiting for.
var ErrGroupClosing = errors.New("consumergroup: closing")

// ErrSeekPending: a seek to an offset stored underneath is pending; the
// owner takes it before it fetches.
var ErrSeekPending = errors.New("consumergroup: a seek to the stored offset is pending")

// ErrResetWhileMembersRun: offsets cannot be reset in Kafka while other
// members of the group are registered (see resetWithKafka).
var ErrResetWhileMembersRun = errors.New("consumergroup: offsets cannot be reset in Kafka while other members of the group run")

// errFencedOff: the instance is fenced off from ZooKeeper, so it cannot
// know whether its claims still hold; commits to Kafka wait.
var errFencedOff = errors.New("fenced off from ZooKeeper (the claim cannot be confirmed); the commit waits")

// errKafkaCommitDeadline: a commit to Kafka gave up, its deadline too near
// for another attempt, or passed before an attempt's request could go out
// (the coordinator lookup outlasted it). The offset stays pending; the next
// round tries again.
var errKafkaCommitDeadline = errors.New("no time left for another attempt before the commit's deadline")

// errKafkaCommitInDoubt: Close stopped waiting for a commit to Kafka whose
// request had been written. The coordinator may still store it.
var errKafkaCommitInDoubt = fmt.Errorf("its OffsetCommit request was sent to Kafka and Close stopped waiting for the answer: "+
	"the offset may or may not have been stored (%w)", ErrGroupClosing)
