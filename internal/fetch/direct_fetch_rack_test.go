package fetch

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// TestDirectFetchHonoursRackID: with Config.RackID set (Kafka 2.4 or
// later), sarama's partition consumer sends its fetches with the rack, and
// the leader may send it to a replica in the same rack (the usual way to
// avoid cross-zone traffic). Direct fetches always go to the leader
// without a rack, so with a RackID they must either carry it or not be
// used: here they are not used (the feed and the first fetch leave the
// partition to sarama's partition consumer); as first built they were, and
// a drop-in user who set RackID read across zones again.
func TestDirectFetchHonoursRackID(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	cg.config.RackID = "rack-a"
	if !directFetchApplies(cg.config.Config) {
		return // the feed is not used with RackID: fine
	}
	f := newRoundFetcher(cg)
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
