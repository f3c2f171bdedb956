package offsets

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// slowHeldStore is checkedOffsetStore whose read of Kafka's offsets takes
// as long as an OffsetFetch to a coordinator that does not answer (up to
// Net.ReadTimeout, 30 s by default, plus the coordinator lookup).
type slowHeldStore struct {
	checkedOffsetStore
	delay   time.Duration
	started chan struct{}
}

func (f *slowHeldStore) held(maxAge time.Duration, owned func() map[string][]int32) (time.Time, map[TopicPartition]int64, error) {
	var read func() (map[TopicPartition]int64, error)
	if owned != nil {
		read = func() (map[TopicPartition]int64, error) {
			close(f.started)
			time.Sleep(f.delay)
			return map[TopicPartition]int64{}, nil
		}
	}
	return f.check.get(maxAge, read)
}

// kafkaDue's read of what Kafka holds (one OffsetFetch per commit round,
// made by hasWork) can take up to Net.ReadTimeout. Every commitKafka of any
// partition (final commits, FlushOffsets, start commits) calls kafkaDue
// under the partition's commitMu without asking for a fresh read: it must
// not wait for one in flight. Else, with dual storage, a partition whose
// ZooKeeper offset is committed and whose Kafka offset is current cannot
// finish its final commit (so cannot release) until an unrelated read of
// Kafka returns, and everything else that takes its commitMu (a recall on a
// pause, a seek) waits with it.
func TestFinalCommitDoesNotWaitForKafkaRead(t *testing.T) {
	const interval = 20 * time.Millisecond
	const delay = 3 * time.Second
	store := &slowHeldStore{checkedOffsetStore: checkedOffsetStore{fakeOffsetStore: fakeOffsetStore{offsets: map[TopicPartition]int64{}}}, delay: delay, started: make(chan struct{})}
	// Dual storage with nothing pending: the final commit touches only
	// Kafka's check (the fake is no ZooKeeper).
	om := newCommitter(KindDual, store)
	om.env.cfg.CommitInterval = interval
	a := om.adopt(TopicPartition{"t", 0}, nil, 10, -1, nil)
	b := om.adopt(TopicPartition{"t", 1}, nil, 7, -1, nil)
	commitToKafka(t, om, a, b)
	time.Sleep(interval)
	go om.hasWork(a) // the commit loop's round reads Kafka's offsets
	<-store.started

	start := time.Now()
	if err := om.FinalCommit(b); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the final commit of a partition with nothing to commit took %v: it waited for the commit loop's read of Kafka (%v)",
			took.Round(time.Millisecond), delay)
	}
}

// One read of what Kafka holds runs at a time: callers that need a fresh
// read while one is in flight wait for it and get its result, callers that
// need none return the last read at once, and Close ending the wait
// (closing) returns ErrGroupClosing at once, the read being kept when it
// ends.
func TestKafkaHeldOffsetsReadsOnceAtATime(t *testing.T) {
	closing := make(chan struct{})
	h := heldOffsets{closing: closing}
	release := make(chan struct{})
	var reads atomic.Int32
	read := func() (map[TopicPartition]int64, error) {
		reads.Add(1)
		<-release
		return map[TopicPartition]int64{{"t", 0}: 5}, nil
	}
	type result struct {
		offsets map[TopicPartition]int64
		err     error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			_, offsets, err := h.get(time.Millisecond, read)
			results <- result{offsets, err}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if _, offsets, err := h.get(time.Millisecond, nil); err != nil || offsets != nil {
		t.Errorf("a caller needing no fresh read got %v, %v; want the last read (none), no error", offsets, err)
	}
	if took := time.Since(start); took > 10*time.Millisecond {
		t.Errorf("a caller needing no fresh read waited %v for the read in flight", took)
	}
	close(release)
	for range 3 {
		if r := <-results; r.err != nil || r.offsets[TopicPartition{"t", 0}] != 5 {
			t.Errorf("a caller waiting for the read in flight got %v, %v", r.offsets, r.err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads for 3 callers at once, want 1", n)
	}

	time.Sleep(2 * time.Millisecond) // the last read is now maxAge old
	release = make(chan struct{})
	read2 := func() (map[TopicPartition]int64, error) {
		<-release
		return map[TopicPartition]int64{{"t", 0}: 9}, nil
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(closing)
	}()
	start = time.Now()
	_, offsets, err := h.get(time.Millisecond, read2)
	if !errors.Is(err, ErrGroupClosing) || offsets[TopicPartition{"t", 0}] != 5 {
		t.Errorf("a wait ended by closing got %v, %v; want the last read, ErrGroupClosing", offsets, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("closing ended the wait after %v", took)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, offsets, _ := h.get(time.Hour, nil)
		if offsets[TopicPartition{"t", 0}] == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned read was not kept when it ended")
		}
		time.Sleep(time.Millisecond)
	}
}
