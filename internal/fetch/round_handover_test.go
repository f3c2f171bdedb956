package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A busy round's answers are handed over while the next round goes out.
// Here the first round's answer waits for a reader that is not there yet
// (its want's channel is unbuffered) when a second partition is asked for:
// the second round must reach the broker before the first round's answer
// is taken. Handed over in the round loop itself, the second round waited
// for that reader; in a rebalance, first fetches waited 10-50 ms behind
// the hand-over of a round of hundreds of partitions.
func TestNextBusyRoundGoesOutWhileTheLastIsHandedOver(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	for p := int32(0); p < 2; p++ {
		res.AddRecord("t", p, nil, sarama.StringEncoder("m"), 0)
		res.GetBlock("t", p).HighWaterMarkOffset = 1
	}
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()).SetLeader("t", 1, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	busy := newRoundFetcher(mockFetchGroup(t, broker))
	busy.own = newOwnConns(busy.env)
	defer busy.closeConns()
	leader, err := busy.env.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	fetches := func() int { return len(fetchRequests(broker)) }

	first := &fetchWant{ctx: context.Background(), topic: "t", partition: 0, size: 1 << 20, limit: 100,
		done: make(chan fetchResult)} // unbuffered: the answer waits for its reader
	taken := false
	defer func() { // lets the round loop end, so closeConns returns, should the test fail
		if !taken {
			select {
			case <-first.done:
			case <-time.After(10 * time.Second):
			}
		}
	}()
	busy.enqueue(leader, first)
	pollUntil(t, "the first round", func() bool { return fetches() == 1 })

	second := &fetchWant{ctx: context.Background(), topic: "t", partition: 1, size: 1 << 20, limit: 100,
		done: make(chan fetchResult, 1)}
	busy.enqueue(leader, second)
	pollUntil(t, "the second round to go out while the first round's answer waits for its reader",
		func() bool { return fetches() == 2 })

	r := <-first.done
	taken = true
	if r.err != nil || r.messages() != 1 {
		t.Fatalf("t/0: %d messages, err %v", r.messages(), r.err)
	}
	if r := <-second.done; r.err != nil || r.messages() != 1 {
		t.Fatalf("t/1: %d messages, err %v", r.messages(), r.err)
	}
}
