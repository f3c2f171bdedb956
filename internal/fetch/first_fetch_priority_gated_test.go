package fetch

import (
	"context"
	"io"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// gatedProxy relays connections to the broker and holds every answer back
// until gate is closed.
type gatedProxy struct {
	gate chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	cs   []net.Conn
}

func (p *gatedProxy) Dial(network, addr string) (net.Conn, error) {
	server, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	ours, theirs := net.Pipe()
	p.mu.Lock()
	p.cs = append(p.cs, ours, server)
	p.mu.Unlock()
	p.wg.Add(2)
	go func() { defer p.wg.Done(); _, _ = io.Copy(server, ours); server.Close() }()
	go func() {
		defer p.wg.Done()
		defer ours.Close()
		<-p.gate
		_, _ = io.Copy(ours, server)
	}()
	return theirs, nil
}

func (p *gatedProxy) closeAll() {
	p.mu.Lock()
	for _, c := range p.cs {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// pollUntil polls cond (under no lock of the caller's) until it holds.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFirstFetchesGoOverTheOwnConnectionAheadOfLongPolls without timing
// windows: first fetch A's answer is held until the long poll for t/1 is
// queued (and held) and first fetch C is counted.
func TestFirstFetchesAheadOfLongPollsGated(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
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
	proxy := &gatedProxy{gate: make(chan struct{})}
	defer proxy.closeAll()
	fconf := *cg.config.Config
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	fconf.Consumer.MaxWaitTime = time.Minute // only the first fetches end the hold
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	cg.config = cfg
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	id := broker.BrokerID()

	type result struct {
		name string
		r    fetchResult
	}
	results := make(chan result, 3)
	fetch := func(name string, f *roundFetcher, partition int32, first bool) {
		results <- result{name, f.fetchUnparsed(context.Background(), "t", partition, 0, math.MaxInt, 1<<20, first)}
	}
	firsts := func() int {
		busy.own.mu.Lock()
		defer busy.own.mu.Unlock()
		if o := busy.own.firsts[id]; o != nil {
			return o.n
		}
		return 0
	}
	go fetch("A", busy, 0, true)
	pollUntil(t, "A's round on the own connection", func() bool {
		busy.own.mu.Lock()
		defer busy.own.mu.Unlock()
		c := busy.own.conns[id]
		return c != nil && c.rounds == 1
	})
	go fetch("B", idle, 1, false)
	pollUntil(t, "B queued", func() bool {
		idle.mu.Lock()
		defer idle.mu.Unlock()
		return idle.inFlight[id]
	})
	go fetch("C", busy, 2, true)
	pollUntil(t, "C counted", func() bool { return firsts() == 2 })
	close(proxy.gate)
	for range 3 {
		if r := <-results; r.r.err != nil {
			t.Fatalf("fetch %s: %v", r.name, r.r.err)
		}
	}
	busy.own.mu.Lock()
	c := busy.own.conns[id]
	busy.own.mu.Unlock()
	c.fetch.mu.Lock()
	requests := c.fetch.correlation
	c.fetch.mu.Unlock()
	if requests != 3 {
		t.Errorf("%d requests over the own connection, want 3", requests)
	}
}
