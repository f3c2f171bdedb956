package fetch

import (
	"context"
	"log/slog"
	"testing"

	"github.com/IBM/sarama"
)

// mockFetchLeader makes broker the leader of t/0 and answers its fetches
// with one record at offset 0 and a high-water mark of 1.
func mockFetchLeader(t *testing.T, broker *sarama.MockBroker) {
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
}

// mockFetchGroup is a group with only what a fetcher needs: a config and
// a client of broker.
func mockFetchGroup(t *testing.T, broker *sarama.MockBroker) *env {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false // the mock broker does not answer it
	conf.Metadata.Retry.Max = 0
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return &env{config: &Config{Config: conf}, client: client, log: slog.New(slog.DiscardHandler)}
}

// After a round over the fetcher's own connection fails (the broker went
// away and came back), it is sent again at once over a new connection,
// instead of failing, and failing on the dead one forever.
func TestFetcherReopensBrokenOwnConnection(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	f := newRoundFetcher(cg)
	f.own = newOwnConns(f.env)
	defer f.closeConns()
	ctx := context.Background()
	if r := f.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("first fetch: %d messages, err %v", len(r.msgs), r.err)
	}
	addr := broker.Addr()
	broker.Close() // the fetcher's connection breaks
	broker = sarama.NewMockBrokerAddr(t, 1, addr)
	defer broker.Close()
	mockFetchLeader(t, broker)
	r := f.fetchUpTo(ctx, "t", 0, 0, 10)
	if r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("fetch after the connection broke: %d messages, err %v; want it sent again over a new connection", len(r.msgs), r.err)
	}
}

// Once the fetcher's own connections are closed (the group is closing), a
// round still queued fails instead of opening a connection nobody would
// close.
func TestFetcherOpensNoConnectionAfterClose(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	f := newRoundFetcher(mockFetchGroup(t, broker))
	f.own = newOwnConns(f.env)
	ctx := context.Background()
	if r := f.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	f.closeConns()
	if r := f.fetchUpTo(ctx, "t", 0, 0, 10); r.err == nil {
		t.Fatal("a fetch after closeConns succeeded")
	}
	f.own.mu.Lock()
	defer f.own.mu.Unlock()
	if len(f.own.conns) != 0 {
		t.Fatalf("%d own connections open after closeConns", len(f.own.conns))
	}
}
