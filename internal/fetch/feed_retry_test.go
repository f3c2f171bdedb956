package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// quickRetry is a feedRetry that waits nothing and counts its retries
// and refreshes.
func quickRetry(retries, refreshes *atomic.Int32) *feedRetry {
	return &feedRetry{
		refresh: func() { refreshes.Add(1) },
		backoff: func(int) time.Duration { return 0 },
		limit:   feedRetryLimit,
		retried: func() { retries.Add(1) },
	}
}

// failingFetch fails every fetch with err.
func failingFetch(err error, fetches *atomic.Int32) func(context.Context, bool, int64, int32) fetchResult {
	return func(context.Context, bool, int64, int32) fetchResult {
		fetches.Add(1)
		return fetchResult{err: err}
	}
}

// A feed whose fetch keeps failing with an error retrying mends ends after
// feedRetryLimit retries (the worker then falls back to sarama), each after
// a metadata refresh; an error retrying cannot mend ends it at once.
func TestBatchFeedRetryBounded(t *testing.T) {
	for _, c := range []struct {
		err     error
		fetches int32
	}{
		{sarama.ErrNotLeaderForPartition, feedRetryLimit + 1},
		{sarama.ErrOffsetOutOfRange, 1},
		{errNoRecordsBelowMark, 1},
		{errors.New("something unknown"), 1},
	} {
		var fetches, retries, refreshes atomic.Int32
		f := newBatchFeed(context.Background(), failingFetch(c.err, &fetches), quickRetry(&retries, &refreshes), nil, 1000, 0, newFeedBudget(1<<20), 0)
		b := <-f.batches
		if !errors.Is(b.err, c.err) {
			t.Fatalf("%v: the feed passed on %d messages and %v", c.err, len(b.msgs), b.err)
		}
		if err := f.stop(); !errors.Is(err, c.err) {
			t.Fatalf("%v: feed ended with %v", c.err, err)
		}
		if got := fetches.Load(); got != c.fetches {
			t.Errorf("%v: %d fetches, want %d", c.err, got, c.fetches)
		}
		if got := refreshes.Load(); got != c.fetches-1 {
			t.Errorf("%v: %d metadata refreshes, want %d", c.err, got, c.fetches-1)
		}
		if got := retries.Load(); got != c.fetches-1 {
			t.Errorf("%v: %d retries counted, want %d", c.err, got, c.fetches-1)
		}
	}
}

// A stop during the retry backoff ends the feed at once, not after it.
func TestBatchFeedStopsDuringBackoff(t *testing.T) {
	var fetches atomic.Int32
	retry := &feedRetry{refresh: func() {}, backoff: func(int) time.Duration { return time.Hour }, limit: feedRetryLimit}
	f := newBatchFeed(context.Background(), failingFetch(sarama.ErrNotLeaderForPartition, &fetches), retry, nil, 1000, 0, newFeedBudget(1<<20), 0)
	for fetches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- f.stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("a stopped feed ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stop waited for the retry backoff")
	}
}

// The errors a feed retries: leader moves and broken connections, not an
// offset out of range or the feed's own errors.
func TestRetriableFeedError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{sarama.ErrNotLeaderForPartition, true},
		{sarama.ErrLeaderNotAvailable, true},
		{sarama.ErrReplicaNotAvailable, true},
		{sarama.ErrFencedLeaderEpoch, true},
		{sarama.ErrRequestTimedOut, true},
		{sarama.ErrOutOfBrokers, true},
		{sarama.ErrNotConnected, true},
		{fmt.Errorf("fetch: %w", syscall.ECONNREFUSED), true},
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{sarama.ErrOffsetOutOfRange, false},
		{sarama.ErrTopicAuthorizationFailed, false},
		{errNoRecordsBelowMark, false},
		{errPartialBatch, false},
		{errLegacyMessageSet, false},
		{errFetcherClosed, false},
		{nil, false},
	} {
		if got := retriableFeedError(c.err); got != c.want {
			t.Errorf("retriableFeedError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// movingLeaderFetch is a mock broker's fetch response holding one record
// batch per offset in [from, to) of t/0, with a high-water mark of to.
func movingLeaderFetch(from, to int64) *sarama.FetchResponse {
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	for o := from; o < to; o++ {
		res.AddRecordBatch("t", 0, nil, sarama.StringEncoder(fmt.Sprint(o)), o, 0, false)
	}
	res.GetBlock("t", 0).HighWaterMarkOffset = to
	return res
}

// leaderMetadata is a metadata response naming leader the leader of t/0,
// among brokers.
func leaderMetadata(t *testing.T, leader *sarama.MockBroker, brokers ...*sarama.MockBroker) sarama.MockResponse {
	m := sarama.NewMockMetadataResponse(t).SetLeader("t", 0, leader.BrokerID())
	for _, b := range brokers {
		m.SetBroker(b.Addr(), b.BrokerID())
	}
	return m
}

// The leader of a fed partition moves from broker 1 to broker 2 mid-stream:
// broker 1 answers NotLeaderForPartition (or, to a fetch carrying the old
// leader epoch, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH), and the feed
// refreshes the metadata and continues on broker 2 at the offset after the
// last batch it passed on: no error reaches the worker (which would fall
// back to sarama's partition consumer), no offset is skipped or passed on
// twice.
func TestBatchFeedFollowsMovedLeader(t *testing.T) {
	for _, kerr := range []sarama.KError{sarama.ErrNotLeaderForPartition, sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch} {
		t.Run(fmt.Sprint(int16(kerr)), func(t *testing.T) { feedFollowsMovedLeader(t, kerr) })
	}
}

// feedFollowsMovedLeader is TestBatchFeedFollowsMovedLeader with broker 1
// answering kerr once the leader moved.
func feedFollowsMovedLeader(t *testing.T, kerr sarama.KError) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	b1.SetLatency(5 * time.Millisecond) // idle fetches at 3 come back empty at once: no hot loop
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b1, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 3)),
	})
	// broker 2 holds the same log, longer: a fetch at 0 there would pass
	// offsets 0-2 on twice
	b2.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b2, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, 6)),
	})
	cg := mockFetchGroup(t, b1)
	busy := newRoundFetcher(cg)
	idle := newRoundFetcher(cg)
	idle.longPoll, idle.own = true, newOwnConns(idle.env)
	defer idle.closeConns()
	fetch := feedFetch(busy, idle, "t", 0, func() {})
	retry := newFeedRetry(cg.client, cg.config.Config, "t")
	retry.backoff = func(int) time.Duration { return 10 * time.Millisecond }
	feed := newBatchFeed(context.Background(), fetch, retry, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
	defer feed.stop()

	var got []int64
	take := func(want int64) {
		t.Helper()
		for len(got) == 0 || got[len(got)-1] < want {
			select {
			case b := <-feed.batches:
				if b.err != nil {
					t.Fatalf("the feed ended with %v after offsets %v: the worker would fall back to sarama", b.err, got)
				}
				b.parse() // as its Source makes them
				for _, m := range b.msgs {
					got = append(got, m.Offset)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no batch in 10 s after offsets %v", got)
			}
		}
	}
	take(2)
	notLeader := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	notLeader.AddError("t", 0, kerr)
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, b2, b1, b2),
		"FetchRequest":    sarama.NewMockWrapper(notLeader),
	})
	take(5)
	if want := []int64{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("offsets passed on %v, want %v", got, want)
	}
}

// A leader with a newer epoch than our metadata (FENCED_LEADER_EPOCH) is
// fetched again after a refresh alone: the backoff would only delay. A
// second one in a row waits the backoff, so a leader that keeps answering
// so is not hammered.
func TestFencedLeaderEpochRetriedAfterRefreshAlone(t *testing.T) {
	refreshes := 0
	retry := &feedRetry{refresh: func() { refreshes++ }, backoff: func(int) time.Duration { return time.Hour }, limit: feedRetryLimit}
	done := make(chan bool, 1)
	go func() { done <- retry.again(context.Background(), sarama.ErrFencedLeaderEpoch) }()
	select {
	case again := <-done:
		if !again || refreshes != 1 {
			t.Fatalf("again = %v after %d refreshes, want true after 1", again, refreshes)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first FENCED_LEADER_EPOCH waited the backoff")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if retry.again(ctx, sarama.ErrFencedLeaderEpoch) {
		t.Fatal("the second FENCED_LEADER_EPOCH in a row did not wait the backoff")
	}
}
