//go:build review

package consumergroup

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// REVIEW: closeConns closes the own connections in the background, and
// the notes bound what outlives Close by Consumer.MaxWaitTime. A broker
// that stops answering (hung, partitioned away without a reset) holds the
// long poll's run loop and its connection until Net.ReadTimeout (30 s by
// default): the bound is the read timeout, not MaxWaitTime.
func TestReviewOwnConnOutlivesCloseBeyondMaxWait(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	f := newFirstFetcher(cg)
	f.longPoll, f.ownConns = true, true
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	broker.SetLatency(4 * time.Second) // the broker hangs
	ctx, cancel := context.WithCancel(context.Background())
	go f.fetchUpTo(ctx, "t", 0, 1, 10)
	time.Sleep(200 * time.Millisecond) // the round is in flight
	cancel()                           // the feed stops
	f.closeConns()                     // the group's teardown
	time.Sleep(3 * cg.config.Consumer.MaxWaitTime)
	f.mu.Lock()
	inFlight := f.inFlight[broker.BrokerID()]
	f.mu.Unlock()
	if inFlight {
		t.Fatalf("the own connection's round is still in flight %v after closeConns (MaxWaitTime %v)",
			3*cg.config.Consumer.MaxWaitTime, cg.config.Consumer.MaxWaitTime)
	}
}
