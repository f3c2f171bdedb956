package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A Kafka broker closes a connection that carried no request for
// connections.max.idle.ms (10 minutes by default). The fetchers' own
// connection to a broker is idle whenever no partition the group reads
// from that broker was fetched for a while; the fetchers close it
// themselves after ownConnIdleClose (a minute), but a broker may be set to
// close sooner. When data comes again, the first busy fetch goes over the
// connection the broker closed and fails: the fetcher sends that round
// again at once over a new connection, so the batch is not late. As first
// built, the feed waited Consumer.Retry.Backoff (2 s by default) and a
// metadata refresh before fetching again, on a healthy cluster.
//
// Here the retry backoff is an hour: the batch after the closed
// connection comes at once, or not within the test's 20 s.
func TestFetcherResendsOverANewConnAfterIdleClose(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	broker.SetLatency(5 * time.Millisecond) // long polls answered at once: no hot loop
	serve := func(to int64) {
		broker.SetHandlerByMap(map[string]sarama.MockResponse{
			"MetadataRequest": leaderMetadata(t, broker, broker),
			"FetchRequest":    sarama.NewMockWrapper(movingLeaderFetch(0, to)),
		})
	}
	serve(1)
	cg := mockFetchGroup(t, broker) // the client dials directly
	proxy := &relayProxy{}
	defer proxy.closeAll()
	fconf := *cg.config.Config // the fetchers' config: the user's proxy
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	fconf.Consumer.Retry.Backoff = time.Hour
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	cg.config = cfg
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	fetch := feedFetch(busy, idle, "t", 0, func() {})
	retry := newFeedRetry(cg.client, &fconf, "t")
	feed := newBatchFeed(context.Background(), fetch, retry, nil, 1<<20, 0, newFeedBudget(1<<26), 0)
	defer feed.stop()

	take := func(want int64) {
		t.Helper()
		select {
		case b := <-feed.batches:
			b.parse() // as its Source makes them
			if b.err != nil || len(b.msgs) == 0 || b.msgs[len(b.msgs)-1].Offset != want {
				t.Fatalf("batch %v, err %v; want one ending at %d", b.msgs, b.err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no batch ending at %d within 20 s: the feed waits its retry backoff after a busy fetch over the connection the broker closed as idle", want)
		}
	}
	take(0) // busy fetch: the busy fetcher's connection is dialed first
	for longPolls(broker) == 0 {
		time.Sleep(time.Millisecond) // the idle fetcher's long polls are going
	}
	proxy.reap(0) // the broker closes the own connection
	time.Sleep(50 * time.Millisecond)
	serve(2)
	take(1) // through the long poll; the next fetch is busy
	serve(3)
	take(2)
}

// longPolls returns how many long polls (fetches that may wait) broker got.
func longPolls(broker *sarama.MockBroker) int {
	n := 0
	for _, rr := range broker.History() {
		if req, ok := rr.Request.(*sarama.FetchRequest); ok && req.MaxWaitTime > 0 {
			n++
		}
	}
	return n
}
