package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

const (
	testTopic     = "events"
	testPartition = int32(3)
)

// errUnexpected ends a loop that made a call its fake did not expect; the
// fake has already failed the test.
var errUnexpected = Permanent(errors.New("fake: unexpected call"))

// testConfig is deterministic: no jitter, so waits are 100ms, 200ms, 400ms,
// 800ms, then 1s.
func testConfig() *Config {
	c := NewConfig()
	c.ProcessingTimeout = 10 * time.Second
	c.ExtraTime = 2 * time.Second
	c.ExtraAttempts = 3
	c.InitialInterval = 100 * time.Millisecond
	c.MaxInterval = time.Second
	c.Multiplier = 2
	c.Jitter = 0
	c.RetryCooldown = 5 * time.Second
	c.ReleaseTimeout = 3 * time.Second
	return c
}

func newClaimer(t testing.TB, reg Registry, conf *Config) *Claimer {
	t.Helper()
	c, err := New(reg, conf)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// ---------------------------------------------------------------------------
// scripted: a Registry that expects an exact sequence of calls.

type call struct {
	method string // "TryClaim", "WatchOwner" or "Release"
	claim  *kazoo.PartitionClaim
	owner  string
	ch     <-chan kazoo.Event
	err    error
	check  func(ctx context.Context, c *kazoo.PartitionClaim) // optional
}

func tryClaim(c *kazoo.PartitionClaim, err error) call {
	return call{method: "TryClaim", claim: c, err: err}
}

func watchOwner(owner string, ch <-chan kazoo.Event, err error) call {
	return call{method: "WatchOwner", owner: owner, ch: ch, err: err}
}

func release(err error) call { return call{method: "Release", err: err} }

// scripted fails the test on any call out of script order, with the wrong
// topic or partition, and on any step left over when the test ends.
type scripted struct {
	t     testing.TB
	mu    sync.Mutex
	calls []call
	done  int
}

func newScripted(t testing.TB, calls ...call) *scripted {
	s := &scripted{t: t, calls: calls}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if left := len(s.calls) - s.done; left > 0 {
			t.Errorf("scripted registry: %d expected calls not made, next %q", left, s.calls[s.done].method)
		}
	})
	return s
}

func (s *scripted) next(ctx context.Context, method, topic string, partition int32, pc *kazoo.PartitionClaim) (call, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if topic != testTopic || partition != testPartition {
		s.t.Errorf("scripted registry: %s(%s, %d), want (%s, %d)", method, topic, partition, testTopic, testPartition)
		return call{}, false
	}
	if s.done >= len(s.calls) {
		s.t.Errorf("scripted registry: unexpected call %s after the script ended (%d calls)", method, s.done)
		return call{}, false
	}
	c := s.calls[s.done]
	if c.method != method {
		s.t.Errorf("scripted registry: call %d is %s, want %s", s.done+1, method, c.method)
		return call{}, false
	}
	s.done++
	if c.check != nil {
		c.check(ctx, pc)
	}
	return c, true
}

func (s *scripted) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	c, ok := s.next(ctx, "TryClaim", topic, partition, nil)
	if !ok {
		return nil, errUnexpected
	}
	return c.claim, c.err
}

func (s *scripted) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	c, ok := s.next(ctx, "WatchOwner", topic, partition, nil)
	if !ok {
		return "", nil, errUnexpected
	}
	return c.owner, c.ch, c.err
}

func (s *scripted) Release(ctx context.Context, pc *kazoo.PartitionClaim) error {
	c, ok := s.next(ctx, "Release", pc.Topic, pc.Partition, pc)
	if !ok {
		return errUnexpected
	}
	return c.err
}

func ourClaim(epoch int32) *kazoo.PartitionClaim {
	return &kazoo.PartitionClaim{Topic: testTopic, Partition: testPartition, InstanceID: "B", SessionID: 0xb, Epoch: epoch}
}

// claimedByOther is what a Registry returns for a held partition.
func claimedByOther(owner string) error {
	return fmt.Errorf("claim %s/%d: owner %s: %w", testTopic, testPartition, owner, kazoo.ErrPartitionClaimedByOther)
}

// ---------------------------------------------------------------------------
// sim: a simulated owner node shared by several instances, with epochs and
// one-shot watches, for scenarios too long to script call by call.

type sim struct {
	t           testing.TB
	mu          sync.Mutex
	owner       string // "" when free
	epoch       int32
	watchers    []chan kazoo.Event
	missWatches bool // WatchOwner hands out channels that never fire
	forward     bool // each watch is forwarded by a goroutine, as package kazoo does
	closed      bool // any call after close fails the test
	arms        int  // watches WatchOwner has set

	attempts   map[string][]time.Time // TryClaim start times by instance
	claimedAt  map[string]time.Time   // last successful claim by instance
	releasedAt time.Time              // last successful release
}

func newSim(t testing.TB) *sim {
	return &sim{t: t, attempts: map[string][]time.Time{}, claimedAt: map[string]time.Time{}}
}

// as is instance id's view of the node.
func (s *sim) as(id string) Registry { return simView{s, id} }

// close makes any further call a test failure: the loop under test must not
// call its Registry after it returned.
func (s *sim) close() { s.mu.Lock(); s.closed = true; s.mu.Unlock() }

func (s *sim) ownerNow() string { s.mu.Lock(); defer s.mu.Unlock(); return s.owner }

func (s *sim) checkCall(method, topic string, partition int32) bool {
	if s.closed {
		s.t.Errorf("sim registry: unexpected %s after the loop returned", method)
		return false
	}
	if topic != testTopic || partition != testPartition {
		s.t.Errorf("sim registry: %s(%s, %d), want (%s, %d)", method, topic, partition, testTopic, testPartition)
		return false
	}
	return true
}

func (s *sim) fire(typ kazoo.EventType) {
	for _, w := range s.watchers {
		w <- kazoo.Event{Type: typ, Path: "/consumers/g/owners/events/3"}
		close(w)
	}
	s.watchers = nil
}

type simView struct {
	s  *sim
	id string
}

func (v simView) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checkCall("TryClaim", topic, partition) {
		return nil, errUnexpected
	}
	now := time.Now()
	s.attempts[v.id] = append(s.attempts[v.id], now)
	switch s.owner {
	case "":
	case v.id:
		s.t.Errorf("sim registry: %s claims a partition it already owns", v.id)
		return nil, errUnexpected
	default:
		return nil, claimedByOther(s.owner)
	}
	s.owner = v.id
	s.epoch++
	s.claimedAt[v.id] = now
	return &kazoo.PartitionClaim{Topic: topic, Partition: partition, InstanceID: v.id, Epoch: s.epoch}, nil
}

func (v simView) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checkCall("WatchOwner", topic, partition) {
		return "", nil, errUnexpected
	}
	if s.owner == "" {
		return "", nil, nil
	}
	ch := make(chan kazoo.Event, 1)
	s.arms++
	if !s.missWatches {
		s.watchers = append(s.watchers, ch)
	}
	if s.forward {
		return s.owner, forwardWatch(ch), nil
	}
	return s.owner, ch, nil
}

// forwardWatch is what package kazoo does with each go-zookeeper watch: a
// goroutine that forwards its one event and ends when the watch fires.
func forwardWatch(in <-chan kazoo.Event) <-chan kazoo.Event {
	out := make(chan kazoo.Event, 1)
	go func() {
		defer close(out)
		if ev, ok := <-in; ok {
			out <- ev
		}
	}()
	return out
}

// armed is how many watches are set and have not fired.
func (s *sim) armed() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.watchers) }

// armCount is how many watches WatchOwner has set in all.
func (s *sim) armCount() int { s.mu.Lock(); defer s.mu.Unlock(); return s.arms }

// endSession drops every watch, as the end of a ZooKeeper session does.
func (s *sim) endSession() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fire(kazoo.EventNotWatching)
}

func (v simView) Release(ctx context.Context, c *kazoo.PartitionClaim) error {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checkCall("Release", c.Topic, c.Partition) {
		return errUnexpected
	}
	if c.Epoch != s.epoch {
		return fmt.Errorf("release %s: %w", c, kazoo.ErrClaimLost)
	}
	if s.owner != c.InstanceID {
		return fmt.Errorf("release %s: %w", c, kazoo.ErrPartitionNotClaimed)
	}
	s.owner = ""
	s.releasedAt = time.Now()
	s.fire(kazoo.EventNodeDeleted)
	return nil
}

// mustClaim makes id the owner, as another instance would.
func (s *sim) mustClaim(t testing.TB, id string) *kazoo.PartitionClaim {
	t.Helper()
	pc, err := s.as(id).TryClaim(context.Background(), testTopic, testPartition)
	if err != nil {
		t.Fatalf("%s: TryClaim: %v", id, err)
	}
	return pc
}

// releaseAfter has the owner of pc release it after d (its drain), in a
// goroutine of the current bubble; the returned channel yields the
// release's error.
func (s *sim) releaseAfter(d time.Duration, pc *kazoo.PartitionClaim) <-chan error {
	done := make(chan error, 1)
	go func() {
		time.Sleep(d)
		done <- s.as(pc.InstanceID).Release(context.Background(), pc)
	}()
	return done
}

// ---------------------------------------------------------------------------
// upstreamClaim is the claim loop of wvanbergen/kafka consumergroup
// (partitionConsumer), transcribed onto Registry: ProcessingTimeout/1s + 2
// attempts one second apart, sleeping only on ErrPartitionClaimedByOther and
// giving up on any other error (such as the "node does not exist" that
// upstream's ClaimPartition returned when the owner vanished between its
// create and its read). No watch, no ctx.
func upstreamClaim(reg Registry, topic string, partition int32, processingTimeout time.Duration) (*kazoo.PartitionClaim, error) {
	maxRetries := int(processingTimeout/time.Second) + 2
	for tries := 0; tries < maxRetries; tries++ {
		pc, err := reg.TryClaim(context.Background(), topic, partition)
		if err == nil {
			return pc, nil
		} else if errors.Is(err, kazoo.ErrPartitionClaimedByOther) && tries+1 < maxRetries {
			time.Sleep(1 * time.Second)
		} else {
			return nil, err
		}
	}
	return nil, errors.New("unreachable")
}
