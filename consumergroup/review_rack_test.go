//go:build review

package consumergroup

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// TestReviewFeedIgnoresRackID: with Config.RackID set (KIP-392, Kafka 2.4
// or later), sarama's partition consumer sends its fetches as version 11+
// carrying the rack, and the leader may redirect it to a replica in the
// same rack (PreferredReadReplica), which sarama then fetches from: the
// usual way to avoid cross-zone traffic. The batch feed, on by default,
// always fetches version 5 from the leader without the rack: a drop-in
// user who set RackID silently reads across zones again.
func TestReviewFeedIgnoresRackID(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	cg.config.RackID = "rack-a"
	if !directFetchApplies(cg.config.Config) {
		return // the feed is not used with RackID: fine
	}
	f := newFirstFetcher(cg)
	if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	for _, rr := range broker.History() {
		if req, ok := any(rr.Request).(*sarama.FetchRequest); ok {
			if req.RackID != "rack-a" {
				t.Fatalf("the feed's fetch (version %d) carries rack %q; with Config.RackID %q sarama's consumer sends version 11+ with it and follows the preferred read replica", req.Version, req.RackID, cg.config.RackID)
			}
			return
		}
	}
	t.Fatal("no fetch request reached the broker")
}
