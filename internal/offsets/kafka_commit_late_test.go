package offsets

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// Each Kafka commit attempt is one OffsetCommit request checked right
// before it is sent, and no request is sent after the commit's deadline.
// Before the request the coordinator may have to be looked up
// (client.Coordinator -> RefreshCoordinator -> findCoordinator, with
// Metadata.Retry.Max retries, 2 s sleeps while the coordinator is loading,
// Net.ReadTimeout per try): whenever no coordinator is cached, the first
// commit and after any broker failure (sarama deregisters the broker). That
// lookup must not come between the claim check and the request: here it
// takes about 9 s, the claim is seen lost 200 ms after the first check, and
// no OffsetCommit may reach the coordinator, whether the lookup outlasts
// the commit's deadline or not.
func TestKafkaCommitChecksClaimRightBeforeSending(t *testing.T) {
	for _, c := range []struct {
		name     string
		budget   time.Duration
		checks   int  // fence checks made
		deadline bool // the result wraps errKafkaCommitDeadline, else kazoo.ErrClaimLost
	}{
		// kafkaCommitBudget with the defaults: min(Zookeeper.Timeout, Net.ReadTimeout)
		{name: "the lookup outlasts the deadline", budget: 6 * time.Second, checks: 1, deadline: true},
		{name: "the claim is lost during the lookup", budget: 20 * time.Second, checks: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var served []time.Time // when each request was answered, in History order
			loading := sarama.NewMockFindCoordinatorResponse(t).SetError(sarama.CoordinatorGroup, "g", sarama.ErrConsumerCoordinatorNotAvailable)
			f := newBrokerFixture(t, brokerOpts{
				notify: func(int, int) {
					mu.Lock()
					served = append(served, time.Now())
					mu.Unlock()
				},
				handlers: func(b *sarama.MockBroker) map[string]sarama.MockResponse {
					return map[string]sarama.MockResponse{
						// the coordinator is loading (a broker restarted): three answers, then found
						"FindCoordinatorRequest": sarama.NewMockSequence(loading, loading, loading,
							sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b)),
						"OffsetCommitRequest": sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNoError),
					}
				}})
			b, store := f.broker, f.store

			var lost atomic.Bool
			var lostAt atomic.Int64
			var checks int
			begin := time.Now()
			fence := func() error {
				checks++
				if lost.Load() {
					return kazoo.ErrClaimLost
				}
				// The claim watch sees the claim move 200 ms after this check.
				time.AfterFunc(200*time.Millisecond, func() { lostAt.Store(time.Now().UnixNano()); lost.Store(true) })
				return nil
			}
			deadline := begin.Add(c.budget)
			err := retryKafkaCommit(deadline, time.Now, nil, fence,
				func() error { return store.commitFenced("t", 0, 42, deadline, fence) })
			took := time.Since(begin)
			t.Logf("retryKafkaCommit: %v, after %v and %d claim checks", err, took.Round(time.Millisecond), checks)
			if c.deadline && !errors.Is(err, errKafkaCommitDeadline) || !c.deadline && !errors.Is(err, kazoo.ErrClaimLost) {
				t.Errorf("retryKafkaCommit = %v, want the deadline %v, else the claim's loss", err, c.deadline)
			}
			if checks != c.checks {
				t.Errorf("%d claim checks, want %d", checks, c.checks)
			}
			if took > c.budget+500*time.Millisecond {
				t.Errorf("the commit returned %v after it began, past its deadline (%v)", took.Round(time.Millisecond), c.budget)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, rr := range b.History() {
				if _, ok := rr.Request.(*sarama.OffsetCommitRequest); !ok || i >= len(served) {
					continue
				}
				at := served[i]
				t.Logf("OffsetCommit answered %v after the commit began, %v after the claim was seen lost",
					at.Sub(begin).Round(time.Millisecond), at.Sub(time.Unix(0, lostAt.Load())).Round(time.Millisecond))
				if lost.Load() && at.UnixNano() > lostAt.Load() || at.After(begin.Add(c.budget)) {
					t.Errorf("an OffsetCommit reached the coordinator %v after the commit began (deadline %v), and after the claim was seen lost: "+
						"the claim check came before a coordinator lookup of several seconds, not right before the request",
						at.Sub(begin).Round(time.Millisecond), c.budget)
				}
			}
		})
	}
}
