package offsets

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// The claim is checked before every attempt of a commit to Kafka: once the
// fence reports the claim lost, no further attempt is made, whatever the
// previous attempt's error; retryable errors are retried, others are not,
// and no attempt starts once the commit's deadline has passed.
func TestKafkaCommitFenceBeforeEveryAttempt(t *testing.T) {
	retryable := kafkaCommitError{sarama.ErrNotCoordinatorForConsumer}
	start := time.Unix(1000, 0)
	for _, c := range []struct {
		name     string
		fences   []error // the fence's answers, in turn; nil beyond
		attempts []error // the attempts' results, in turn; nil beyond
		budget   time.Duration
		calls    int  // attempts made
		lost     bool // the result wraps kazoo.ErrClaimLost
		ok       bool // the result is nil
	}{
		{name: "lost before the first attempt", fences: []error{kazoo.ErrClaimLost}, budget: time.Minute, calls: 0, lost: true},
		{name: "lost after a failed attempt", fences: []error{nil, kazoo.ErrClaimLost}, attempts: []error{retryable, nil},
			budget: time.Minute, calls: 1, lost: true},
		{name: "lost after two failed attempts", fences: []error{nil, nil, kazoo.ErrClaimLost}, attempts: []error{retryable, retryable, nil},
			budget: time.Minute, calls: 2, lost: true},
		{name: "retried until it succeeds", attempts: []error{retryable, retryable, nil}, budget: time.Minute, calls: 3, ok: true},
		{name: "a permanent error is not retried", attempts: []error{kafkaCommitError{sarama.ErrUnknownMemberId}},
			budget: time.Minute, calls: 1},
		{name: "no attempt after the deadline", attempts: []error{retryable, retryable, retryable, retryable, retryable, retryable},
			budget: 350 * time.Millisecond, calls: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := start
			var fences, calls int
			fence := func() error {
				defer func() { fences++ }()
				if fences < len(c.fences) {
					return c.fences[fences]
				}
				return nil
			}
			attempt := func() error {
				if fences != calls+1 {
					t.Fatalf("attempt %d made after %d fence checks; want a check right before every attempt", calls+1, fences)
				}
				defer func() { calls++ }()
				if calls < len(c.attempts) {
					return c.attempts[calls]
				}
				return nil
			}
			err := retryKafkaCommit(start.Add(c.budget), func() time.Time { return now },
				&advancingTimer{now: &now}, fence, attempt)
			if calls != c.calls {
				t.Errorf("%d attempts, want %d", calls, c.calls)
			}
			if got := errors.Is(err, kazoo.ErrClaimLost); got != c.lost {
				t.Errorf("result %v: wraps ErrClaimLost %v, want %v", err, got, c.lost)
			}
			if (err == nil) != c.ok {
				t.Errorf("result %v, want nil %v", err, c.ok)
			}
			if !c.ok && !c.lost && retryableCommit(partitionError("t", 0, err)) {
				t.Errorf("result %v is retryable: the caller would make the attempts again", err)
			}
		})
	}
}

// One commit to Kafka is one OffsetCommit request: a coordinator that
// answers NOT_COORDINATOR is not asked again inside the store (sarama's
// admin would retry Admin.Retry.Max times without the claim being checked
// in between); the offset manager decides on another attempt.
func TestKafkaOffsetStoreCommitIsSingleShot(t *testing.T) {
	f := newBrokerFixture(t, brokerOpts{
		handlers: func(*sarama.MockBroker) map[string]sarama.MockResponse {
			return map[string]sarama.MockResponse{
				"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNotCoordinatorForConsumer),
			}
		},
		config: func(cfg *sarama.Config) {
			cfg.Admin.Retry.Backoff = time.Millisecond
			cfg.Metadata.Retry.Backoff = time.Millisecond
		},
	})
	err := f.store.Commit("t", 0, 42)
	if !errors.Is(err, sarama.ErrNotCoordinatorForConsumer) {
		t.Errorf("commit = %v, want ErrNotCoordinatorForConsumer", err)
	}
	if commits := requests[*sarama.OffsetCommitRequest](f.broker); commits != 1 {
		t.Fatalf("one commit sent %d OffsetCommit requests, want 1", commits)
	}
}

// checkedOffsetStore is fakeOffsetStore that reads every partition at once,
// as KafkaOffsets does each commit round.
type checkedOffsetStore struct {
	fakeOffsetStore
	check heldOffsets
	reads int
}

func (f *checkedOffsetStore) held(maxAge time.Duration, owned func() map[string][]int32) (time.Time, map[TopicPartition]int64, error) {
	var read func() (map[TopicPartition]int64, error)
	if owned != nil {
		read = func() (map[TopicPartition]int64, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reads++
			out := make(map[TopicPartition]int64)
			for topic, ps := range owned() {
				for _, p := range ps {
					tp := TopicPartition{topic, p}
					out[tp] = -1
					if n, ok := f.offsets[tp]; ok {
						out[tp] = n
					}
				}
			}
			return out, nil
		}
	}
	return f.check.get(maxAge, read)
}

// An offset changed in Kafka behind the owner's back (an old owner's late
// commit) is written again by the owner's next commit round, although the
// owner has nothing new to commit; an offset Kafka still holds is not, and
// the round reads Kafka once for all the owner's partitions.
func TestKafkaStorageRepairsOffsetChangedBehindOwner(t *testing.T) {
	const interval = 20 * time.Millisecond
	for _, kind := range []Kind{KindKafka, KindDual} {
		t.Run(kind.String(), func(t *testing.T) {
			store := &checkedOffsetStore{fakeOffsetStore: fakeOffsetStore{offsets: map[TopicPartition]int64{}}}
			om := newCommitter(kind, store) // the fake is no ZooKeeper: only Kafka is written
			om.env.cfg.CommitInterval = interval
			idle := om.adopt(TopicPartition{"t", 0}, nil, 10, -1, nil)
			other := om.adopt(TopicPartition{"t", 1}, nil, 7, -1, nil)
			commitToKafka(t, om, idle, other)
			time.Sleep(interval)
			for _, o := range []*Partition{idle, other} {
				if om.hasWork(o) {
					t.Fatalf("%v: work while Kafka holds the owner's offset", o.TP)
				}
			}
			store.mu.Lock()
			store.offsets[idle.TP] = 3 // the late commit
			reads := store.reads
			store.mu.Unlock()
			time.Sleep(interval)
			if !om.hasWork(idle) {
				t.Fatal("no work for a partition whose Kafka offset an old owner moved")
			}
			if om.hasWork(other) {
				t.Fatal("work for a partition Kafka holds the owner's offset of")
			}
			if store.reads != reads+1 {
				t.Errorf("%d reads of Kafka in one round, want 1", store.reads-reads)
			}
			idle.commitMu.Lock()
			err := om.kafkaStoreOf().commitKafka(idle, idle.Tracker.CommittedOffset(), false)
			idle.commitMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := store.get(idle.TP); got != 10 {
				t.Fatalf("Kafka holds %d after the round, want the owner's 10", got)
			}
			if om.hasWork(idle) {
				t.Error("work left after the repair")
			}
			want := map[TopicPartition]int64{{"t", 0}: 10, {"t", 1}: 7}
			if got := maps.Clone(store.offsets); !maps.Equal(got, want) {
				t.Errorf("Kafka holds %v, want %v", got, want)
			}
		})
	}
}

// Once Close stops waiting for the partitions (closing), a commit to Kafka
// stops waiting at once, whether for the coordinator's lookup or for the
// answer to its request: neither takes a context, and either can take
// Net.ReadTimeout (here: a broker that never answers them).
func TestKafkaOffsetStoreCommitEndsAtClose(t *testing.T) {
	for _, c := range []struct {
		name     string
		unserved string // the request the broker never answers
		cached   bool   // the coordinator is looked up before the commit
	}{
		{name: "the coordinator lookup", unserved: "FindCoordinatorRequest"},
		{name: "the request", unserved: "OffsetCommitRequest", cached: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			closing := make(chan struct{})
			f := newBrokerFixture(t, brokerOpts{closing: closing, cached: c.cached,
				handlers: func(*sarama.MockBroker) map[string]sarama.MockResponse {
					return map[string]sarama.MockResponse{
						"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNoError),
						c.unserved:            nil,
					}
				}})
			store := f.store
			time.AfterFunc(200*time.Millisecond, func() { close(closing) })
			start := time.Now()
			err := store.commitFenced("t", 0, 42, start.Add(time.Minute), func() error { return nil })
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the commit returned %v after it began, %v after closing", took.Round(time.Millisecond), (took - 200*time.Millisecond).Round(time.Millisecond))
			}
			if !errors.Is(err, ErrGroupClosing) {
				t.Errorf("commit = %v, want ErrGroupClosing", err)
			}
			if retryableCommit(kafkaCommitError{err}) {
				t.Errorf("%v is retryable: the commit's attempts would go on until its deadline", err)
			}
		})
	}
}

// advancingTimer is a backoff.Timer over a fake clock: each wait moves
// *now on by its length and fires at once.
type advancingTimer struct {
	now *time.Time
	c   chan time.Time
}

func (t *advancingTimer) Start(d time.Duration) {
	if t.c == nil {
		t.c = make(chan time.Time, 1)
	}
	*t.now = t.now.Add(d)
	t.c <- *t.now
}
func (t *advancingTimer) Stop()               {}
func (t *advancingTimer) C() <-chan time.Time { return t.c }
