package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
)

// movedLeaderEngine returns an engine reading t/0 through batch feeds over
// a client of b1 and b2, retrying after backoff, and a counter of its
// feeds' retries. The engine is closed at the test's end.
func movedLeaderEngine(t *testing.T, b1 *sarama.MockBroker, backoff time.Duration) (*Engine, metrics.Counter) {
	t.Helper()
	return mockEngine(t, b1, func(conf *sarama.Config) { conf.Consumer.Retry.Backoff = backoff })
}

// mockEngine is movedLeaderEngine with the config changed by configure.
func mockEngine(t *testing.T, b1 *sarama.MockBroker, configure func(*sarama.Config)) (*Engine, metrics.Counter) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false // the mock brokers do not answer it
	conf.Metadata.Retry.Max = 0
	configure(conf)
	client, err := sarama.NewClient([]string{b1.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	retries := &metrics.StandardCounter{}
	e := NewEngine(Config{Config: conf, Batches: true}, Deps{Client: client, Log: slog.New(slog.DiscardHandler), FeedRetries: retries})
	t.Cleanup(func() {
		e.Close()
		_ = client.Close()
	})
	return e, retries
}

// readOffsets reads src until it handed out offset last, failing after
// 10 s: far longer than a reported move takes to follow, far shorter than
// what waits for sarama's background refresh or a retry's backoff here.
func readOffsets(t *testing.T, src Source, last int64) []int64 {
	t.Helper()
	var got []int64
	wake := make(chan struct{})
	timeout := time.AfterFunc(10*time.Second, func() { close(wake) })
	defer timeout.Stop()
	for len(got) == 0 || got[len(got)-1] < last {
		m, err := src.Next(wake)
		if err != nil {
			t.Fatalf("the source ended (%v) after offsets %v", err, got)
		}
		if m == nil {
			t.Fatalf("no message in 10 s after offsets %v", got)
		}
		got = append(got, m.Offset)
	}
	return got
}

// metadataRequests counts the metadata requests brokers answered.
func metadataRequests(brokers ...*sarama.MockBroker) int {
	n := 0
	for _, b := range brokers {
		for _, rr := range b.History() {
			if _, ok := rr.Request.(*sarama.MetadataRequest); ok {
				n++
			}
		}
	}
	return n
}

// The leader of a fed partition moves from broker 1 to broker 2 without
// an error: broker 1 holds the feed's long poll and never answers it.
// Once the topic source reports the move, the engine refreshes the topic's
// metadata (one request), stops waiting for broker 1 and reads on from
// broker 2 at the offset after the last batch passed on. Without the
// report the feed waits for broker 1 until the read timeout (30 s).
func TestEngineFollowsReportedLeaderMove(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b1, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 3)),
	})
	b2.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b1, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 6)),
	})
	e, retries := movedLeaderEngine(t, b1, time.Hour)
	src, err := e.Partition(context.Background(), "t", 0, nil, nil).Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := readOffsets(t, src, 2)

	// broker 1 no longer leads and holds every fetch unanswered (a nil
	// response: the mock broker sends nothing)
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b2, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(nil),
	})
	b2.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b2, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 6)),
	})
	waitFor(t, "a fetch held by broker 1", func() bool { return heldFetches(b1) > 0 })
	before := metadataRequests(b1, b2)
	e.LeadersMoved("t", map[int32]int32{0: 2})

	got = append(got, readOffsets(t, src, 5)...)
	if want := []int64{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("offsets handed out %v, want %v", got, want)
	}
	if n := metadataRequests(b1, b2) - before; n != 1 {
		t.Errorf("%d metadata requests after the report, want 1", n)
	}
	if n := retries.Count(); n != 0 {
		t.Errorf("%d retries, want none: the move was followed without an error", n)
	}
}

// heldFetches counts the fetch requests broker held unanswered.
func heldFetches(broker *sarama.MockBroker) int {
	n := 0
	for _, rr := range broker.History() {
		if _, ok := rr.Request.(*sarama.FetchRequest); ok && rr.Response == nil {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 10 s", what)
		}
	}
}

// The old leader answers NOT_LEADER_OR_FOLLOWER before the move is
// reported: the feed waits out its retry's backoff (an hour here), but the
// report ends it, and the feed reads on from broker 2.
func TestFeedBackoffEndsAtReportedLeaderMove(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b1, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 3)),
	})
	e, retries := movedLeaderEngine(t, b1, time.Hour)
	src, err := e.Partition(context.Background(), "t", 0, nil, nil).Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := readOffsets(t, src, 2)

	notLeader := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	notLeader.AddError("t", 0, sarama.ErrNotLeaderForPartition)
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b1, b1, b2), // not heard of the move yet
		"FetchRequest":    sarama.NewMockWrapper(notLeader),
	})
	waitFor(t, "retry", func() bool { return retries.Count() > 0 })
	for _, b := range []*sarama.MockBroker{b1, b2} {
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"MetadataRequest": leaderMetadata(t, b2, b1, b2),
			"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 6)),
		})
	}
	e.LeadersMoved("t", map[int32]int32{0: 2})
	got = append(got, readOffsets(t, src, 5)...)
	if want := []int64{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("offsets handed out %v, want %v", got, want)
	}
}

// switchingClient names, for every partition, the leader set last, at
// epoch 0, and refreshes nothing.
type switchingClient struct {
	mu     sync.Mutex
	leader *sarama.Broker
}

func (c *switchingClient) set(b *sarama.Broker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader = b
}

func (c *switchingClient) LeaderAndEpoch(string, int32) (*sarama.Broker, int32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader, 0, nil
}

func (c *switchingClient) Leader(topic string, partition int32) (*sarama.Broker, error) {
	b, _, err := c.LeaderAndEpoch(topic, partition)
	return b, err
}

func (c *switchingClient) RefreshMetadata(...string) error { return nil }

// brokerFor returns an unopened sarama Broker naming mock's address and id.
func brokerFor(mock *sarama.MockBroker) *sarama.Broker {
	var md sarama.MetadataResponse
	md.AddBroker(mock.Addr(), mock.BrokerID())
	return md.Brokers[0]
}

// answering makes broker answer every fetch of t/0 and t/1 with one
// message holding value, after latency.
func answering(t *testing.T, broker *sarama.MockBroker, value string, latency time.Duration) {
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	for p := range int32(2) {
		res.AddRecordBatch("t", p, nil, sarama.StringEncoder(value), 0, 0, false)
		res.GetBlock("t", p).HighWaterMarkOffset = 1
	}
	broker.SetLatency(latency)
	broker.SetHandlerByMap(map[string]sarama.MockResponse{"FetchRequest": sarama.NewMockWrapper(res)})
}

// A want queued for broker 1 behind a round in flight there, whose
// partition the client names broker 2 leader of by the time its round
// goes out, is sent to broker 2: each round's wants are checked against
// the client's leaders before sending.
func TestFetcherRoundChecksLeaderBeforeSending(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	answering(t, b1, "old", 200*time.Millisecond) // the first round stays in flight
	answering(t, b2, "new", 0)
	client := &switchingClient{leader: brokerFor(b1)}
	e := &env{config: &Config{Config: mockConfig()}, client: client, log: slog.New(slog.DiscardHandler)}
	f := newRoundFetcher(e)
	f.own = newOwnConns(f.env)
	defer f.closeConns()

	first := make(chan fetchResult, 1)
	go func() { first <- f.fetchUpTo(context.Background(), "t", 0, 0, 10) }()
	waitRoundInFlight(t, f, "first round in flight")
	second := make(chan fetchResult, 1)
	go func() { second <- f.fetchUpTo(context.Background(), "t", 1, 0, 10) }()
	waitFor(t, "second want queued", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.pending[1]) == 1
	})
	client.set(brokerFor(b2)) // a refresh names broker 2 now

	if r := <-first; r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Value) != "old" {
		t.Fatalf("first round: %d messages, err %v", len(r.msgs), r.err)
	}
	r := <-second
	if r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("second round: %d messages, err %v", len(r.msgs), r.err)
	}
	if v := string(r.msgs[0].Value); v != "new" {
		t.Fatalf("second want answered by the %s leader, want the new one", v)
	}
}

// mockConfig is the config of a client of mock brokers.
func mockConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false
	return conf
}

// A fetch the old leader answers with a leader error, once the client
// names another leader, is sent again to the new one at once: the error
// never reaches the feed's retry (and its backoff).
func TestFetcherFollowsLeaderErrorToKnownNewLeader(t *testing.T) {
	for _, kerr := range []sarama.KError{sarama.ErrNotLeaderForPartition, sarama.ErrFencedLeaderEpoch} {
		t.Run(fmt.Sprint(int16(kerr)), func(t *testing.T) {
			b1 := sarama.NewMockBroker(t, 1)
			defer b1.Close()
			b2 := sarama.NewMockBroker(t, 2)
			defer b2.Close()
			notLeader := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
			notLeader.AddError("t", 0, kerr)
			b1.SetLatency(100 * time.Millisecond)
			b1.SetHandlerByMap(map[string]sarama.MockResponse{"FetchRequest": sarama.NewMockWrapper(notLeader)})
			answering(t, b2, "new", 0)
			client := &switchingClient{leader: brokerFor(b1)}
			e := &env{config: &Config{Config: mockConfig()}, client: client, log: slog.New(slog.DiscardHandler)}
			f := newRoundFetcher(e)
			f.own = newOwnConns(f.env)
			defer f.closeConns()

			done := make(chan fetchResult, 1)
			go func() { done <- f.fetchUpTo(context.Background(), "t", 0, 0, 10) }()
			waitRoundInFlight(t, f, "round in flight")
			client.set(brokerFor(b2))
			r := <-done
			if r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Value) != "new" {
				t.Fatalf("%d messages, err %v; want the new leader's message", len(r.msgs), r.err)
			}
		})
	}
}

// A feed's retry backoff ends when a leader move of its topic is applied,
// and fetches again without a refresh of its own (the move's refreshed
// the metadata); without one it waits the whole backoff.
func TestFeedRetryBackoffEndsAtAppliedMove(t *testing.T) {
	var refreshes int
	moved := make(chan struct{})
	r := &feedRetry{
		refresh: func() { refreshes++ },
		backoff: func(int) time.Duration { return time.Hour },
		limit:   feedRetryLimit,
		moved:   func() <-chan struct{} { return moved },
	}
	again := make(chan bool, 1)
	go func() { again <- r.again(context.Background(), sarama.ErrNotLeaderForPartition) }()
	close(moved)
	select {
	case ok := <-again:
		if !ok {
			t.Fatal("no retry after the move")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backoff did not end at the move")
	}
	if refreshes != 0 {
		t.Errorf("%d refreshes after the move, want 0", refreshes)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r.again(ctx, sarama.ErrNotLeaderForPartition) {
		t.Error("retried after the feed stopped")
	}
	if r.again(context.Background(), errors.New("not retriable")) {
		t.Error("retried an error retrying does not mend")
	}
}

// Close does not wait for a metadata refresh under way (the broker holds
// it); the goroutine applying moves ends once the refresh returns (the
// read timeout, 1 s here). Reports after Close are ignored.
func TestEngineCloseDoesNotWaitForMoveRefresh(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b1.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": leaderMetadata(t, b1, b1)})
	e, _ := mockEngine(t, b1, func(conf *sarama.Config) { conf.Net.ReadTimeout = time.Second })
	b1.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": sarama.NewMockWrapper(nil)}) // held
	e.LeadersMoved("t", map[int32]int32{0: 2})
	waitFor(t, "a metadata request held", func() bool { return heldMetadata(b1) > 0 })
	e.Close()
	select {
	case <-e.moves.done:
		t.Fatal("Close waited for the metadata refresh")
	default:
	}
	e.LeadersMoved("t", map[int32]int32{0: 3})
	select {
	case <-e.moves.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the goroutine applying moves outlived its refresh")
	}
}

// heldMetadata counts the metadata requests broker held unanswered.
func heldMetadata(broker *sarama.MockBroker) int {
	n := 0
	for _, rr := range broker.History() {
		if _, ok := rr.Request.(*sarama.MetadataRequest); ok && rr.Response == nil {
			n++
		}
	}
	return n
}

// waitRoundInFlight waits until f's round to broker 1 is in flight with
// nothing queued behind it.
func waitRoundInFlight(t *testing.T, f *roundFetcher, what string) {
	t.Helper()
	waitFor(t, what, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.inFlight[1] && len(f.pending[1]) == 0
	})
}
