package offsets

import (
	"runtime"
	"testing"
	"time"
)

// A recall that begins and ends between a commit's read of the position
// and its check of the recall must still hold the commit back: the
// position it read may include a mark of a message the handler got while
// the buffer was emptied, above one taken back, which must never be
// committed.
//
// The interleaving is forced on one processor through the tracker's
// mutex in starvation mode, which hands the lock straight to the next
// waiter and yields: the commit reads the position (4, marked during the
// recall), hands the lock to the recall's LowerCeiling(2), and resumes only
// once the recall ended.
func TestCommitNeverPassesAMessageTakenBackDuringTheRead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	store := newFakeOffsetStore()
	om := kafkaOnly(store)
	tp := TopicPartition{"t", 0}
	o := om.adopt(tp, nil, 0, -1, nil)

	// The worker begins taking back the buffer; the handler got 3 while
	// 2 is taken back, and marks it.
	o.BeginRecall()
	o.Mark(nil, 3)

	mu := o.Tracker.TestLocker()
	mu.Lock()
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		_ = om.Commit(o) // waits in Pending
	}()
	time.Sleep(5 * time.Millisecond)
	recalled := make(chan struct{})
	go func() {
		o.Tracker.LowerCeiling(2) // waits behind the commit's Pending
		o.EndRecall()
		close(recalled)
	}()
	time.Sleep(5 * time.Millisecond)
	// Into starvation mode: the woken commit finds the lock taken again.
	mu.Unlock()
	mu.Lock()
	runtime.Gosched()
	mu.Unlock()
	<-recalled
	<-committed
	if n, _ := store.get(tp); n > 2 {
		t.Fatalf("committed %d, past offset 2, which the handler never got", n)
	}
}

// Two recalls that overlap (the worker's own, and a take-back from a
// buffer shared with other partitions) hold commits back until both end:
// counting the starts and ends alone, the second start would look like
// an end.
func TestOverlappingRecallsHoldCommitsUntilTheLastEnds(t *testing.T) {
	store := newFakeOffsetStore()
	om := kafkaOnly(store)
	tp := TopicPartition{"t", 0}
	o := om.adopt(tp, nil, 0, -1, nil)
	o.BeginRecall() // the worker's
	o.BeginRecall() // the shared buffer's
	o.Mark(nil, 3)
	if _, _, ok := o.PendingOutsideRecall(); ok {
		t.Fatal("a commit may go ahead while two overlapping recalls run")
	}
	o.EndRecall()
	if _, _, ok := o.PendingOutsideRecall(); ok {
		t.Fatal("a commit may go ahead while one of two overlapping recalls runs")
	}
	o.EndRecall()
	if _, _, ok := o.PendingOutsideRecall(); !ok {
		t.Fatal("commits still held back after both recalls ended")
	}
}
