package offsets

import (
	"sync/atomic"
	"time"
)

// What a partition's offsets look like from outside, for the group's
// State and its lag gauges: read at any time from any goroutine, without
// the commit lock (a commit may hang while ZooKeeper is silent).

// CommitOutcome is the outcome of a partition's latest commit that wrote
// something or failed.
type CommitOutcome struct {
	At  time.Time // when it ended; zero: none yet
	Err error     // nil: it was written
}

// partitionWatch is what Partition keeps for its readers.
type partitionWatch struct {
	hwmSeen atomic.Int64                  // the highest high-water mark asked of the leader (0: none)
	outcome atomic.Pointer[CommitOutcome] // nil: no commit yet
}

// SeeHighWaterMark records hwm, the partition's high-water mark as its
// leader just reported it (the group's lag refresh): HighWaterMark and
// the lag of later commits take the higher of it and the fetches' mark.
func (o *Partition) SeeHighWaterMark(hwm int64) {
	for {
		cur := o.watch.hwmSeen.Load()
		if hwm <= cur || o.watch.hwmSeen.CompareAndSwap(cur, hwm) {
			return
		}
	}
}

// HighWaterMark returns the partition's high-water mark as last known:
// the higher of what its fetches saw and what SeeHighWaterMark recorded;
// -1 when neither knows one yet.
func (o *Partition) HighWaterMark() int64 {
	hwm := o.watch.hwmSeen.Load()
	if o.owner != nil {
		hwm = max(hwm, o.owner.HighWaterMark())
	}
	if hwm <= 0 {
		return -1
	}
	return hwm
}

// LastCommit returns the outcome of the partition's latest commit that
// wrote something or failed (zero: none yet).
func (o *Partition) LastCommit() CommitOutcome {
	if p := o.watch.outcome.Load(); p != nil {
		return *p
	}
	return CommitOutcome{}
}

// noteCommit records a commit's outcome: err, or a write when the
// tracker's count of writes moved past writesBefore. A commit with nothing
// to write leaves the last outcome as it was.
func (o *Partition) noteCommit(writesBefore uint64, err error) {
	if err == nil && o.Tracker.Writes() == writesBefore {
		return
	}
	o.watch.outcome.Store(&CommitOutcome{At: time.Now(), Err: err})
}

// Lag returns the partition's lag: its high-water mark minus its
// committed offset, or -1 when either is unknown.
func (o *Partition) Lag() int64 {
	committed := o.Tracker.CommittedOffset()
	if committed < 0 {
		return -1
	}
	return o.lag(committed)
}
