package consumergroup

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestOwnConnReleasedWithinItsReadTimeout: a broker that stops answering
// holds a long poll on the fetcher's own connection; once the group tears
// the fetcher down, the round and its connection end within the own
// connections' read timeout (Consumer.MaxWaitTime + ownConnReadMargin), not
// the client's (30 s by default).
func TestOwnConnReleasedWithinItsReadTimeout(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	if got, want := ownConnConfig(cg.config.Config).Net.ReadTimeout, cg.config.Consumer.MaxWaitTime+ownConnReadMargin; got != want {
		t.Fatalf("own connections' read timeout %v, want %v", got, want)
	}
	f := newFirstFetcher(cg)
	f.longPoll, f.ownConns = true, true
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	bound := cg.config.Consumer.MaxWaitTime + ownConnReadMargin + time.Second
	broker.SetLatency(bound + 2*time.Second) // the broker hangs, past the bound
	ctx, cancel := context.WithCancel(context.Background())
	go f.fetchUpTo(ctx, "t", 0, 1, 10)
	time.Sleep(200 * time.Millisecond) // the round is in flight
	cancel()                           // the feed stops
	f.closeConns()                     // the group's teardown
	deadline := time.Now().Add(bound)
	for {
		f.mu.Lock()
		inFlight := f.inFlight[broker.BrokerID()]
		f.mu.Unlock()
		if !inFlight {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the own connection's round is still in flight %v after closeConns", bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
