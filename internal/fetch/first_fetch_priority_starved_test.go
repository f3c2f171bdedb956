package fetch

import (
	"context"
	"testing"
	"time"
)

// The idle fetcher holds back only long polls of partitions at their log
// end: a partition a long poll's byte limit starved holds records below
// its high-water mark, and its next round goes out at once though a first
// fetch is out to the broker.
func TestStarvedIdleRoundNotHeldBehindFirstFetches(t *testing.T) {
	f, broker := starvedFetcher(t,
		starvedResponse([]int32{0}, []int32{1}), // 1 starved by the byte limit
		starvedResponse([]int32{1}, nil))
	f.env.config.Consumer.MaxWaitTime = 2 * time.Second
	f.longPoll, f.own = true, newOwnConns(f.env)
	defer f.closeConns()
	leader, err := f.env.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	w0 := &fetchWant{ctx: context.Background(), topic: "t", partition: 0, size: 1 << 20, limit: 100, done: make(chan fetchResult, 1)}
	w1 := &fetchWant{ctx: context.Background(), topic: "t", partition: 1, size: 1 << 20, limit: 100, done: make(chan fetchResult, 1)}
	f.mu.Lock()
	f.pending[1] = []*fetchWant{w0, w1}
	f.leaders[1] = leader
	f.inFlight[1] = true
	f.mu.Unlock()
	// A rebalance's first fetch goes out to the broker while the long poll
	// is in flight (here: before; the long poll is held, as meant).
	f.own.firstFetchStarted(broker.BrokerID())
	defer f.own.firstFetchEnded(broker.BrokerID())
	go f.run(1)

	if r := <-w0.done; r.err != nil || r.messages() != 1 {
		t.Fatalf("t/0: %d messages, err %v", r.messages(), r.err)
	}
	fed := time.Now()
	r := <-w1.done
	if r.err != nil || r.messages() != 1 {
		t.Fatalf("t/1: %d messages, err %v", r.messages(), r.err)
	}
	if d := time.Since(fed); d > time.Second {
		t.Errorf("starved t/1, records below its mark, answered %v after the round that starved it: held behind the first fetch", d)
	}
}
