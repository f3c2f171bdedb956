package topics

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// scriptedMetadata is a fake KafkaDeps.Fetch: it records each request's
// topics and answers with the current answer (or error), which the test
// changes between refreshes.
type scriptedMetadata struct {
	mu       sync.Mutex
	requests [][]string
	resp     *sarama.MetadataResponse
	err      error
}

func (s *scriptedMetadata) fetch(topics []string) (*sarama.MetadataResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, slices.Clone(topics))
	return s.resp, s.err
}

func (s *scriptedMetadata) set(resp *sarama.MetadataResponse, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp, s.err = resp, err
}

func (s *scriptedMetadata) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// answer builds a metadata response: topic -> leaders by partition ID
// (listed out of order on purpose), or a topic-level error.
func answer(topics map[string][]int32, errs map[string]sarama.KError) *sarama.MetadataResponse {
	r := &sarama.MetadataResponse{}
	for name, leaders := range topics {
		t := &sarama.TopicMetadata{Name: name}
		for id := len(leaders) - 1; id >= 0; id-- {
			p := &sarama.PartitionMetadata{ID: int32(id), Leader: leaders[id]}
			if leaders[id] < 0 {
				p.Err = sarama.ErrLeaderNotAvailable
			}
			t.Partitions = append(t.Partitions, p)
		}
		r.Topics = append(r.Topics, t)
	}
	for name, err := range errs {
		r.Topics = append(r.Topics, &sarama.TopicMetadata{Name: name, Err: err})
	}
	return r
}

func newTestKafkaSource(t *testing.T, fake *scriptedMetadata, topics []string, leaders bool, report func(error)) *KafkaSource {
	t.Helper()
	if report == nil {
		report = func(error) {}
	}
	k, err := NewKafka(KafkaDeps{Fetch: fake.fetch, Log: slog.New(slog.DiscardHandler), Report: report}, topics, leaders, time.Second)
	if err != nil {
		t.Fatalf("NewKafka: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

func TestKafkaSourceReadsPartitionsAndLeaders(t *testing.T) {
	fake := &scriptedMetadata{}
	fake.set(answer(
		map[string][]int32{"a": {2, 1, -1}, "b": {1}, "other": {1}},
		map[string]sarama.KError{"gone": sarama.ErrUnknownTopicOrPartition, "secret": sarama.ErrTopicAuthorizationFailed}),
		nil)
	topics := []string{"a", "b", "gone", "secret", "unlisted"}
	for _, leaders := range []bool{true, false} {
		k := newTestKafkaSource(t, fake, topics, leaders, nil)

		got, err := k.Partitions("a", Leaders{All: true})
		want := []Partition{{0, 2}, {1, 1}, {2, -1}} // sorted by ID; no leader is -1
		if !leaders {
			want = []Partition{{0, -1}, {1, -1}, {2, -1}} // as the ZooKeeper source gives them
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("leaders %v: a = %v, %v; want %v", leaders, got, err, want)
		}
		for _, missing := range []string{"gone", "unlisted"} {
			_, err := k.Partitions(missing, Leaders{All: true})
			var mt *MissingTopicError
			if !errors.As(err, &mt) || !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				t.Errorf("%s: want a missing topic (unknown to Kafka), got %v", missing, err)
			}
		}
		// A topic Kafka refuses to describe is an error, not a missing topic.
		_, err = k.Partitions("secret", Leaders{All: true})
		var mt *MissingTopicError
		if errors.As(err, &mt) || !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
			t.Errorf("secret: want the authorization error, got %v", err)
		}
		// Partitions returns a copy.
		got[0].Leader = 99
		if again, _ := k.Partitions("a", Leaders{All: true}); again[0].Leader == 99 {
			t.Error("partitions must return a copy of the stored answer")
		}
	}
	// Each source asked once, at creation, for exactly the subscribed topics.
	if n := fake.count(); n != 2 {
		t.Fatalf("%d requests, want 1 per source", n)
	}
	if !slices.Equal(fake.requests[0], topics) {
		t.Errorf("asked for %v, want %v", fake.requests[0], topics)
	}
}

func TestKafkaSourceTopicBeingCreated(t *testing.T) {
	fake := &scriptedMetadata{}
	fake.set(answer(nil, map[string]sarama.KError{"new": sarama.ErrLeaderNotAvailable}), nil)
	k := newTestKafkaSource(t, fake, []string{"new"}, true, nil)
	_, err := k.Partitions("new", Leaders{All: true})
	var mt *MissingTopicError
	if !errors.As(err, &mt) {
		t.Fatalf("a topic listed without partitions must be missing for now, got %v", err)
	}
}

func TestKafkaSourceFirstRequestFails(t *testing.T) {
	fake := &scriptedMetadata{}
	fake.set(nil, sarama.ErrOutOfBrokers)
	k, err := NewKafka(KafkaDeps{Fetch: fake.fetch, Log: slog.New(slog.DiscardHandler), Report: func(error) {}}, []string{"a"}, true, time.Second)
	if k != nil || !errors.Is(err, sarama.ErrOutOfBrokers) {
		t.Fatalf("got %v, %v; want no source and the fetch error", k, err)
	}
	// No goroutine left behind: TestMain checks.
}

// TestKafkaSourceRefresh: one request per interval; the loop is woken only
// when the answer changed (partitions added, a topic appearing, a leader
// moving when leaders count); a failed request keeps the last answer and
// is reported once.
func TestKafkaSourceRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &scriptedMetadata{}
		fake.set(answer(map[string][]int32{"a": {1, 1}}, map[string]sarama.KError{"b": sarama.ErrUnknownTopicOrPartition}), nil)
		var reports []error
		var mu sync.Mutex
		report := func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }
		k := newTestKafkaSource(t, fake, []string{"a", "b"}, true, report)

		woken := func() bool {
			select {
			case <-k.Changed():
				return true
			default:
				return false
			}
		}
		step := func(what string, wantWake bool) {
			t.Helper()
			before := fake.count()
			time.Sleep(time.Second) // one interval
			synctest.Wait()
			if n := fake.count() - before; n != 1 {
				t.Fatalf("%s: %d requests in one interval, want 1", what, n)
			}
			if got := woken(); got != wantWake {
				t.Fatalf("%s: woken = %v, want %v", what, got, wantWake)
			}
		}

		step("nothing changed", false)
		fake.set(answer(map[string][]int32{"a": {1, 1, 1}}, map[string]sarama.KError{"b": sarama.ErrUnknownTopicOrPartition}), nil)
		step("a partition added", true)
		if p, _ := k.Partitions("a", Leaders{All: true}); len(p) != 3 {
			t.Fatalf("a has %d partitions after the refresh, want 3", len(p))
		}
		fake.set(answer(map[string][]int32{"a": {1, 1, 1}, "b": {1}}, nil), nil)
		step("b created", true)
		if p, err := k.Partitions("b", Leaders{All: true}); err != nil || len(p) != 1 {
			t.Fatalf("b = %v, %v after the refresh", p, err)
		}
		fake.set(answer(map[string][]int32{"a": {1, 2, 1}, "b": {1}}, nil), nil)
		step("a leader moved", true)

		fake.set(nil, sarama.ErrOutOfBrokers)
		step("Kafka out of reach", false)
		step("still out of reach", false)
		if p, err := k.Partitions("a", Leaders{All: true}); err != nil || !slices.Equal(p, []Partition{{0, 1}, {1, 2}, {2, 1}}) {
			t.Fatalf("a = %v, %v while Kafka is out of reach; want the last answer", p, err)
		}
		mu.Lock()
		if len(reports) != 1 || !errors.Is(reports[0], sarama.ErrOutOfBrokers) {
			t.Errorf("reports %v, want the first failure only", reports)
		}
		mu.Unlock()
		fake.set(answer(map[string][]int32{"a": {1, 2, 1}, "b": {1}}, nil), nil)
		step("back, unchanged", false)
	})
}

func TestKafkaSourceLeaderMovesIgnoredWithoutLeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &scriptedMetadata{}
		fake.set(answer(map[string][]int32{"a": {1, 1}}, nil), nil)
		k := newTestKafkaSource(t, fake, []string{"a"}, false, nil)
		fake.set(answer(map[string][]int32{"a": {2, 2}}, nil), nil)
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-k.Changed():
			t.Fatal("a leader move must not wake the loop when the strategy ignores leaders")
		default:
		}
		if fake.count() != 2 {
			t.Fatalf("%d requests, want 2", fake.count())
		}
	})
}

// TestKafkaSourceCloseFailsARequestInFlight: close releases the client
// before waiting for the refresh goroutine, so a broker that does not
// answer cannot hold Close up.
func TestKafkaSourceCloseFailsARequestInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		calls := 0
		fetch := func([]string) (*sarama.MetadataResponse, error) {
			calls++
			if calls == 1 {
				return answer(map[string][]int32{"a": {1}}, nil), nil
			}
			<-unblock // a broker that never answers, until its client closes
			return nil, sarama.ErrClosedClient
		}
		k, err := NewKafka(KafkaDeps{
			Fetch:   fetch,
			Release: func() { close(unblock) },
			Log:     slog.New(slog.DiscardHandler),
			Report:  func(error) {},
		}, []string{"a"}, true, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait() // the second request hangs
		if calls != 2 {
			t.Fatalf("%d requests, want the second in flight", calls)
		}
		k.Close() // returns: synctest reports a deadlock otherwise
	})
}
