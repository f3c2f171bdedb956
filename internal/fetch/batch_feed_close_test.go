package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestOwnConnReleasedAtClose: a broker that stops answering holds a long
// poll on the fetcher's own connection; once the group tears the fetcher
// down, the round and its connection end at once (their socket is shut
// under the request), not after the read timeout (30 s by default), which
// still bounds a round while the group runs.
func TestOwnConnReleasedAtClose(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	f := newRoundFetcher(cg)
	f.longPoll, f.own = true, newOwnConns(f.env)
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	broker.SetLatency(4 * time.Second) // the broker hangs
	ctx, cancel := context.WithCancel(context.Background())
	go f.fetchUpTo(ctx, "t", 0, 1, 10)
	time.Sleep(200 * time.Millisecond) // the round is in flight
	cancel()                           // the feed stops
	t0 := time.Now()
	f.closeConns() // the group's teardown
	took := time.Since(t0)
	f.mu.Lock()
	inFlight := f.inFlight[broker.BrokerID()]
	f.mu.Unlock()
	if inFlight {
		t.Fatalf("the own connection's round is still in flight after closeConns returned (%v)", took)
	}
	if took > time.Second {
		t.Fatalf("closeConns took %v: it waited for the hung broker's answer", took)
	}
	if r := f.fetchUpTo(context.Background(), "t", 0, 1, 10); r.err == nil {
		t.Fatal("a fetch after closeConns succeeded")
	}
}
