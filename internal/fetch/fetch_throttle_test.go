package fetch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestThrottledFetchDoesNotEndTheFeed: a broker enforcing a client quota
// answers a throttled fetch at once with an empty response (no partitions,
// only ThrottleTime). sarama's partition consumer reads that as "nothing
// yet" and fetches again; so does the feed, after holding back as asked
// (read as "fetch response without the partition", it ended the feed, and
// every feed in that round fell back to sarama's partition consumer).
func TestThrottledFetchDoesNotEndTheFeed(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	data := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	data.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
	data.GetBlock("t", 0).HighWaterMarkOffset = 1
	throttled := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0), ThrottleTime: 20 * time.Millisecond}
	var fetches atomic.Int32
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockSequence(throttled, data),
	})
	cg := mockFetchGroup(t, broker)
	busy := newRoundFetcher(cg)
	idle := newRoundFetcher(cg)
	idle.longPoll, idle.own = true, newOwnConns(idle.env)
	defer idle.closeConns()
	fetchFrom := feedFetch(busy, idle, "t", 0, func() {})
	fetch := func(ctx context.Context, isBusy bool, offset int64, size int32) fetchResult {
		fetches.Add(1)
		return fetchFrom(ctx, isBusy, offset, size)
	}
	feed := newBatchFeed(context.Background(), fetch, nil, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
	defer feed.stop()
	select {
	case r := <-feed.batches:
		r.parse() // as its Source makes them
		if r.err != nil {
			t.Fatalf("after a throttled (empty) fetch response the feed ended with %q after %d fetch(es); sarama's partition consumer fetches again", r.err, fetches.Load())
		}
		if len(r.msgs) != 1 || r.msgs[0].Offset != 0 {
			t.Fatalf("the feed passed on %d messages, want offset 0", len(r.msgs))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed passed nothing on in 5 s")
	}
}
