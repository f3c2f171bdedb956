package fetch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// epochClient names leader for every partition, at leader epoch 7.
type epochClient struct{ rawClient }

func (c epochClient) LeaderAndEpoch(string, int32) (*sarama.Broker, int32, error) {
	return c.leader, 7, nil
}

// A fetch carries the leader epoch of the client's metadata
// (CurrentLeaderEpoch), so a broker with another epoch says so
// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) instead of answering as a
// leader it no longer is.
func TestFetcherSendsLeaderEpoch(t *testing.T) {
	rb := newRawFetchBroker(t)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_3_0_0 // Fetch v11, which rawFetchBroker reads
	conf.ApiVersionsRequest = false
	leader := sarama.NewBroker(rb.ln.Addr().String())
	if err := leader.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	f := newRoundFetcher(&env{config: &Config{Config: conf}, client: epochClient{rawClient{leader}}, log: slog.New(slog.DiscardHandler)})
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatalf("fetch: %v", r.err)
	}
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if len(rb.epochs) != 1 || rb.epochs[0] != 7 {
		t.Fatalf("CurrentLeaderEpoch sent: %v, want [7]", rb.epochs)
	}
}

// The client's metadata moves a partition's leader while the old leader
// keeps answering its long polls empty, without an error: the feed's
// fetches reach the new leader within about leaderCheckInterval, not
// after sarama's background refresh (10 minutes by default).
func TestFetcherFollowsMovedLeaderDespiteEmptyAnswers(t *testing.T) {
	old := sarama.NewMockBroker(t, 1)
	defer old.Close()
	moved := sarama.NewMockBroker(t, 2)
	defer moved.Close()
	metadata := func(leader int32) sarama.MockResponse {
		return sarama.NewMockMetadataResponse(t).SetBroker(old.Addr(), 1).SetBroker(moved.Addr(), 2).SetLeader("t", 0, leader)
	}
	empty := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	empty.AddError("t", 0, sarama.ErrNoError)
	old.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": metadata(1), "FetchRequest": sarama.NewMockWrapper(empty)})
	data := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	data.AddRecordBatch("t", 0, nil, sarama.StringEncoder("m"), 0, 0, false)
	data.GetBlock("t", 0).HighWaterMarkOffset = 1
	moved.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": metadata(2), "FetchRequest": sarama.NewMockWrapper(data)})

	f := newRoundFetcher(mockFetchGroup(t, old))
	f.longPoll = true
	ctx := context.Background()
	if r := f.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil || len(r.msgs) != 0 {
		t.Fatalf("first fetch: %d messages, err %v; want none from the old leader", len(r.msgs), r.err)
	}
	time.Sleep(50 * time.Millisecond) // a refresh the first fetch started ends before the move
	old.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": metadata(2), "FetchRequest": sarama.NewMockWrapper(empty)})
	movedAt := time.Now()
	for time.Since(movedAt) < 3*leaderCheckInterval {
		r := f.fetchUpTo(ctx, "t", 0, 0, 10)
		if r.err != nil {
			t.Fatalf("fetch: %v", r.err)
		}
		if len(r.msgs) > 0 {
			if d := time.Since(movedAt); d > leaderCheckInterval+500*time.Millisecond {
				t.Errorf("new leader fetched %v after the move, want within about %v", d, leaderCheckInterval)
			}
			return
		}
		time.Sleep(20 * time.Millisecond) // the long poll the mock does not wait
	}
	t.Fatalf("no fetch reached the new leader %v after the move", time.Since(movedAt))
}
