package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A round goes to the broker the client names leader now: a want queued
// while a round is in flight, after the broker's address changed under the
// same id, goes to the new address, not to the broker the round loop
// started with.
func TestFetcherRoundFollowsLeaderAddress(t *testing.T) {
	oldAddr := sarama.NewMockBroker(t, 1)
	defer oldAddr.Close()
	newAddr := sarama.NewMockBroker(t, 1)
	defer newAddr.Close()
	answer := func(b *sarama.MockBroker, value string) {
		res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
		res.AddRecordBatch("t", 0, nil, sarama.StringEncoder(value), 0, 0, false)
		res.GetBlock("t", 0).HighWaterMarkOffset = 1
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetLeader("t", 0, 1),
			"FetchRequest":    sarama.NewMockWrapper(res),
		})
	}
	answer(oldAddr, "old")
	answer(newAddr, "new")
	cg := mockFetchGroup(t, oldAddr)
	toOld, err := cg.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	toNew, err := mockFetchGroup(t, newAddr).client.Leader("t", 0) // id 1 at the new address
	if err != nil {
		t.Fatal(err)
	}
	oldAddr.SetLatency(300 * time.Millisecond) // the first round stays in flight
	f := newRoundFetcher(cg)
	want := func() *fetchWant {
		return &fetchWant{ctx: context.Background(), topic: "t", partition: 0, size: 1 << 20, limit: 10, done: make(chan fetchResult, 1)}
	}
	first, second := want(), want()
	f.enqueue(toOld, first)
	for { // until the first round is taken
		f.mu.Lock()
		taken := len(f.pending[1]) == 0
		f.mu.Unlock()
		if taken {
			break
		}
		time.Sleep(time.Millisecond)
	}
	f.enqueue(toNew, second)
	r := <-first.done
	r.parse() // as the waiting caller does (fetchFrom)
	if r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Value) != "old" {
		t.Fatalf("first round: %d messages, err %v", len(r.msgs), r.err)
	}
	r = <-second.done
	r.parse()
	if r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("second round: %d messages, err %v", len(r.msgs), r.err)
	}
	if v := string(r.msgs[0].Value); v != "new" {
		t.Fatalf("second round answered by the %s address, want the new one", v)
	}
}
