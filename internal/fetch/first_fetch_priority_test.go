package fetch

import (
	"bytes"
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// A rebalance's first fetches, answered at once, go over the own
// connection while partitions fetched already wait at their log end: the
// idle fetcher holds its long poll to the broker back until no first
// fetch is out to it. Were it sent, every later busy round would go over
// the client's connection for as long as it waits (up to
// Consumer.MaxWaitTime), decoded by sarama at about twice this package's
// cost.
//
// Here first fetch A of t/0 comes over a slow link (0.5 s); meanwhile the
// idle fetcher is asked for t/1, at its log end, and then first fetch C
// of t/2 is asked for. C must go over the own connection, after A, and the
// long poll for t/1 after C: three requests over the own connection.
func TestFirstFetchesGoOverTheOwnConnectionAheadOfLongPolls(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecordBatch("t", 0, nil, sarama.ByteEncoder(bytes.Repeat([]byte("x"), 256<<10)), 0, 0, false)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	res.AddError("t", 1, sarama.ErrNoError) // at its log end
	res.AddRecord("t", 2, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 2).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()).SetLeader("t", 1, broker.BrokerID()).SetLeader("t", 2, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	cg := mockFetchGroup(t, broker)
	proxy := &relayProxy{bytesPerSecond: 512 << 10}
	defer proxy.closeAll()
	fconf := *cg.config.Config
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	fconf.Consumer.MaxWaitTime = 5 * time.Second // longer than the test: only the first fetches end the hold
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	cg.config = cfg
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()

	ctx := context.Background()
	type result struct {
		name string
		r    fetchResult
	}
	results := make(chan result, 3)
	fetch := func(name string, f *roundFetcher, partition int32, first bool) {
		results <- result{name, f.fetchUnparsed(ctx, "t", partition, 0, math.MaxInt, 1<<20, first)}
	}
	go fetch("A", busy, 0, true)
	for busy.own.firstFetchesDone(broker.BrokerID()) == nil {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	go fetch("B", idle, 1, false)
	time.Sleep(50 * time.Millisecond)
	go fetch("C", busy, 2, true)
	for range 3 {
		r := <-results
		if r.r.err != nil {
			t.Fatalf("fetch %s: %v", r.name, r.r.err)
		}
	}
	busy.own.mu.Lock()
	c := busy.own.conns[broker.BrokerID()]
	busy.own.mu.Unlock()
	c.fetch.mu.Lock()
	requests := c.fetch.correlation
	c.fetch.mu.Unlock()
	if requests != 3 {
		t.Errorf("%d requests over the own connection, want 3: first fetch C went over the client's connection while the long poll for t/1 held the own one", requests)
	}
}

// The hold ends when the last first fetch out to the broker ends, or after
// Consumer.MaxWaitTime; the busy fetcher never holds.
func TestLongPollHoldEndsWithTheFirstFetchesOrMaxWaitTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Consumer.MaxWaitTime = 500 * time.Millisecond
		busy, idle := newFetchers(&env{config: &Config{Config: conf}})
		held := func(f *roundFetcher) chan struct{} {
			done := make(chan struct{})
			go func() { f.holdLongPoll(1); close(done) }()
			return done
		}
		over := func(done chan struct{}) bool {
			synctest.Wait()
			select {
			case <-done:
				return true
			default:
				return false
			}
		}

		if !over(held(idle)) {
			t.Fatal("held with no first fetch out")
		}
		busy.own.firstFetchStarted(1)
		busy.own.firstFetchStarted(1)
		if !over(held(busy)) {
			t.Fatal("the busy fetcher held its round")
		}
		h := held(idle)
		if over(h) {
			t.Fatal("the long poll went out while two first fetches were out")
		}
		busy.own.firstFetchEnded(1)
		if over(h) {
			t.Fatal("the long poll went out while a first fetch was out")
		}
		busy.own.firstFetchEnded(1)
		if !over(h) {
			t.Fatal("the long poll still held after the first fetches ended")
		}

		busy.own.firstFetchStarted(1)
		h = held(idle)
		time.Sleep(499 * time.Millisecond)
		if over(h) {
			t.Fatal("the hold ended before Consumer.MaxWaitTime")
		}
		time.Sleep(time.Millisecond)
		if !over(h) {
			t.Fatal("held longer than Consumer.MaxWaitTime")
		}
		busy.own.firstFetchEnded(1)
	})
}
