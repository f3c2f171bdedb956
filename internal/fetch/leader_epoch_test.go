package fetch

import (
	"context"
	"log/slog"
	"testing"

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
