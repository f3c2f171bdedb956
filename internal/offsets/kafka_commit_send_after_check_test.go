package offsets

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A commit's request is written right after its claim check, whatever else
// is in flight to the coordinator: sarama's Broker holds its lock for a
// whole round trip, so over the client's connection the commit would wait,
// after the check, for the read of what Kafka holds (here, answered 1.5 s
// later), the admin's requests or other partitions' commits, and go out
// after its deadline on a claim check that old. Commits go over a
// connection of their own (commitConn).
func TestKafkaCommitNotDelayedAfterClaimCheck(t *testing.T) {
	const latency = 1500 * time.Millisecond // the coordinator answers slowly (loaded)
	f := newBrokerFixture(t, brokerOpts{latency: latency, logWrite: true, handlers: offsetHandlers(t)})
	store, log := f.store, f.writes
	readDone := f.readInFlight(t)

	begin := time.Now()
	deadline := begin.Add(500 * time.Millisecond) // the commit's deadline
	var checkedAt time.Time
	err := store.commitFenced("t", 0, 42, deadline, func() error {
		checkedAt = time.Now() // the claim holds now; say it is lost 100 ms later
		return nil
	})
	<-readDone
	if checkedAt.IsZero() {
		t.Fatalf("the claim was never checked (err %v)", err)
	}
	sentAt, ok := log.first(apiOffsetCommit)
	if !ok {
		t.Fatalf("no OffsetCommit sent (err %v)", err)
	}
	t.Logf("claim checked %v after the commit began; OffsetCommit written %v after that check (deadline %v after the begin); err %v",
		checkedAt.Sub(begin).Round(time.Millisecond), sentAt.Sub(checkedAt).Round(time.Millisecond),
		deadline.Sub(begin), err)
	if sentAt.After(deadline) {
		t.Errorf("the OffsetCommit was written %v after the commit's deadline, %v after its claim check passed",
			sentAt.Sub(deadline).Round(time.Millisecond), sentAt.Sub(checkedAt).Round(time.Millisecond))
	}
}

// A commit that Close stopped waiting for (Closing: ErrGroupClosing,
// reported on Errors() by the worker's final commit) is not written
// afterwards, once Close closed the ZooKeeper session and another member
// may own the partition: it was written right after its check (and is
// reported in doubt), or never is (the commit connection's socket is shut).
func TestKafkaCommitAbandonedAtCloseNotWrittenAfterwards(t *testing.T) {
	const latency = 1500 * time.Millisecond
	closing := make(chan struct{})
	f := newBrokerFixture(t, brokerOpts{latency: latency, logWrite: true, closing: closing, handlers: offsetHandlers(t)})
	store, log := f.store, f.writes
	readDone := f.readInFlight(t)
	time.AfterFunc(200*time.Millisecond, func() { close(closing) })
	err := store.commitFenced("t", 0, 42, time.Now().Add(time.Minute), func() error { return nil })
	returned := time.Now()
	t.Logf("commitFenced returned %v", err)
	<-readDone
	time.Sleep(latency + 500*time.Millisecond)
	sentAt, ok := log.first(apiOffsetCommit)
	if ok && sentAt.After(returned) {
		t.Errorf("commitFenced returned %v (Close stopped waiting), and its OffsetCommit was written %v later",
			err, sentAt.Sub(returned).Round(time.Millisecond))
	}
	if !errors.Is(err, ErrGroupClosing) || ok != errors.Is(err, errKafkaCommitInDoubt) {
		t.Errorf("commitFenced = %v, OffsetCommit written %v: want ErrGroupClosing, in doubt (errKafkaCommitInDoubt) iff written", err, ok)
	}
}

// A throttle the coordinator asks for in a commit's answer is waited out
// before the next commit's claim check, not by sarama between that check
// and the request: a commit whose deadline comes before the throttle ends
// sends nothing, and the next one is checked once the throttle has passed
// and written right after its check.
func TestKafkaCommitWaitsOutThrottleBeforeClaimCheck(t *testing.T) {
	const throttle = time.Second
	answer := &sarama.OffsetCommitResponse{Version: 6, ThrottleTimeMs: int32(throttle / time.Millisecond)}
	answer.AddError("t", 0, sarama.ErrNoError)
	f := newBrokerFixture(t, brokerOpts{logWrite: true, handlers: func(*sarama.MockBroker) map[string]sarama.MockResponse {
		return map[string]sarama.MockResponse{"OffsetCommitRequest": sarama.NewMockWrapper(answer)} // OffsetCommit v6
	}})
	store, log := f.store, f.writes
	commits := func() int { return log.count(apiOffsetCommit) }
	if err := store.commitFenced("t", 0, 1, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	throttled := time.Now()

	checked := false
	err := store.commitFenced("t", 0, 2, time.Now().Add(throttle/2), func() error { checked = true; return nil })
	if !errors.Is(err, errKafkaCommitDeadline) || checked || commits() != 1 {
		t.Errorf("a commit due before the throttle ends: %v, claim checked %v, %d requests written; want errKafkaCommitDeadline, no check, 1",
			err, checked, commits())
	}

	var checkedAt time.Time
	err = store.commitFenced("t", 0, 3, time.Now().Add(5*time.Second), func() error { checkedAt = time.Now(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	last := log.writes[len(log.writes)-1]
	log.mu.Unlock()
	if checkedAt.Sub(throttled) < throttle-50*time.Millisecond {
		t.Errorf("the claim was checked %v after the throttled answer, want after the throttle (%v)", checkedAt.Sub(throttled), throttle)
	}
	if last.key != apiOffsetCommit || last.at.Sub(checkedAt) > 100*time.Millisecond {
		t.Errorf("the request was written %v after the claim check", last.at.Sub(checkedAt))
	}
}

// The commit connection's socket lets a commit's request through only
// before its deadline and while closing is open.
func TestKafkaCommitWriteGate(t *testing.T) {
	closing := make(chan struct{})
	g := &writeGate{closing: closing}
	if err := g.allow(); err != nil {
		t.Fatalf("unarmed (a handshake): %v", err)
	}
	w := g.arm(time.Now().Add(time.Hour))
	if err := g.allow(); err != nil || !g.wrote(w) {
		t.Fatalf("armed before the deadline: %v, wrote %v", err, g.wrote(w))
	}
	w = g.arm(time.Now().Add(-time.Millisecond))
	if err := g.allow(); !errors.Is(err, errKafkaCommitDeadline) || g.wrote(w) {
		t.Fatalf("armed past the deadline: %v, wrote %v", err, g.wrote(w))
	}
	g.disarm()
	close(closing)
	if err := g.allow(); !errors.Is(err, ErrGroupClosing) {
		t.Fatalf("once closing: %v", err)
	}
}

// offsetHandlers answers OffsetFetch with offset 10 of t/0 and every
// OffsetCommit with success.
func offsetHandlers(t *testing.T) func(*sarama.MockBroker) map[string]sarama.MockResponse {
	return func(*sarama.MockBroker) map[string]sarama.MockResponse {
		return map[string]sarama.MockResponse{
			"OffsetFetchRequest":  sarama.NewMockOffsetFetchResponse(t).SetOffset("g", "t", 0, 10, "", sarama.ErrNoError).SetError(sarama.ErrNoError),
			"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNoError),
		}
	}
}

// readInFlight looks the coordinator up (cached from then on) and starts a
// commit round's read of what Kafka holds, returning once its request was
// written; the channel is closed when the read ends.
func (f *brokerFixture) readInFlight(t *testing.T) <-chan struct{} {
	t.Helper()
	if _, err := f.store.coordinator(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = f.store.held(0, func() map[string][]int32 { return map[string][]int32{"t": {0}} })
	}()
	f.writes.waitFor(apiOffsetFetch)
	return done
}
