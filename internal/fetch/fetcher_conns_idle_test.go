package fetch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// twoLeaders makes b1 the leader of t/0 and b2 of t/1, each answering its
// partition's fetches with one record at offset 0.
func twoLeaders(t *testing.T, b1, b2 *sarama.MockBroker) {
	md := sarama.NewMockMetadataResponse(t).
		SetBroker(b1.Addr(), b1.BrokerID()).SetBroker(b2.Addr(), b2.BrokerID()).
		SetLeader("t", 0, b1.BrokerID()).SetLeader("t", 1, b2.BrokerID())
	for p, b := range []*sarama.MockBroker{b1, b2} {
		res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
		res.AddRecord("t", int32(p), nil, sarama.StringEncoder("m"), 0)
		res.GetBlock("t", int32(p)).HighWaterMarkOffset = 1
		b.SetHandlerByMap(map[string]sarama.MockResponse{"MetadataRequest": md, "FetchRequest": sarama.NewMockWrapper(res)})
	}
}

// proxiedFetchGroup is mockFetchGroup whose fetchers dial through proxy
// while the client dials directly, so proxy sees the own connections
// only.
func proxiedFetchGroup(t *testing.T, broker *sarama.MockBroker, proxy *relayProxy) *env {
	cg := mockFetchGroup(t, broker)
	fconf := *cg.config.Config
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	return &env{config: cfg, client: cg.client, log: slog.New(slog.DiscardHandler)}
}

// The group opens at most one connection of its own per broker beside the
// client's, shared by its fetchers: busy fetches and long polls of
// partitions on two brokers dial two. As first built, each fetcher had its
// own connection per broker (four here), each with its own TLS and SASL
// handshake.
func TestFetchersOpenOneOwnConnPerBroker(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	twoLeaders(t, b1, b2)
	proxy := &relayProxy{}
	defer proxy.closeAll()
	busy, idle := newFetchers(proxiedFetchGroup(t, b1, proxy))
	defer idle.closeConns()
	defer busy.closeConns()
	ctx := context.Background()
	for p := range int32(2) {
		for _, f := range []*roundFetcher{busy, idle, busy, idle} {
			if r := f.fetchUpTo(ctx, "t", p, 0, 10); r.err != nil || len(r.msgs) != 1 {
				t.Fatalf("fetch of t/%d: %d messages, err %v", p, len(r.msgs), r.err)
			}
		}
	}
	if n := proxy.dialed(); n != 2 {
		t.Fatalf("the fetchers dialed %d connections of their own to 2 brokers, want one per broker", n)
	}
}

// An own connection no round used for idleClose is closed, and the next
// round opens a new one.
func TestOwnConnClosedWhenIdleAndReopened(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	proxy := &relayProxy{}
	defer proxy.closeAll()
	busy, _ := newFetchers(proxiedFetchGroup(t, broker, proxy))
	busy.own.idleClose = 20 * time.Millisecond
	defer busy.closeConns()
	ctx := context.Background()
	if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	busy.own.mu.Lock()
	conn := busy.own.conns[1].broker
	busy.own.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		busy.own.mu.Lock()
		open := len(busy.own.conns)
		busy.own.mu.Unlock()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the own connection is still open 10 s after its last round (idleClose %v)", busy.own.idleClose)
		}
	}
	if ok, _ := conn.Connected(); ok {
		t.Fatal("the idle own connection was forgotten but not closed")
	}
	if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("fetch after the idle close: %d messages, err %v", len(r.msgs), r.err)
	}
	if n := proxy.dialed(); n != 2 {
		t.Fatalf("%d connections dialed, want 2: the first, and a new one after the idle close", n)
	}
}

// An idle timer armed before the connection's last round closes nothing:
// only the one armed by the last release does.
func TestOwnConnKeptWhileUsed(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	proxy := &relayProxy{}
	defer proxy.closeAll()
	busy, _ := newFetchers(proxiedFetchGroup(t, broker, proxy))
	defer busy.closeConns()
	ctx := context.Background()
	for range 2 {
		if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
			t.Fatal(r.err)
		}
	}
	busy.own.mu.Lock()
	c := busy.own.conns[1]
	busy.own.mu.Unlock()
	busy.own.closeIdle(1, c, c.released-1) // the first round's timer, firing late
	busy.own.mu.Lock()
	kept := busy.own.conns[1] == c
	busy.own.mu.Unlock()
	if !kept {
		t.Fatal("the idle timer of a round before the last one closed the connection")
	}
	busy.own.closeIdle(1, c, c.released) // the last round's
	if ok, _ := c.broker.Connected(); ok {
		t.Fatal("the last round's idle timer left the connection open")
	}
}

// closeConns closes an own connection whose idle timer is still pending,
// and the timer, firing after, reopens or closes nothing.
func TestCloseConnsBeforeIdleClose(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	proxy := &relayProxy{}
	defer proxy.closeAll()
	busy, idle := newFetchers(proxiedFetchGroup(t, broker, proxy))
	busy.own.idleClose = 50 * time.Millisecond
	ctx := context.Background()
	if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	if r := idle.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	busy.own.mu.Lock()
	conn := busy.own.conns[1].broker
	busy.own.mu.Unlock()
	busy.closeConns()
	idle.closeConns()
	if ok, _ := conn.Connected(); ok {
		t.Fatal("the own connection is open after closeConns")
	}
	time.Sleep(100 * time.Millisecond) // past idleClose
	busy.own.mu.Lock()
	defer busy.own.mu.Unlock()
	if len(busy.own.conns) != 0 || proxy.dialed() != 1 {
		t.Fatalf("after closeConns: %d own connections kept, %d dialed (want 0 and 1)", len(busy.own.conns), proxy.dialed())
	}
}

// A round answered at once goes over the own connection unless a long
// poll is in flight there, when it goes over the client's: Kafka answers a
// connection's requests in order, and the long poll would hold it up for
// up to Consumer.MaxWaitTime. A long poll always goes over the own one.
func TestBusyRoundAvoidsLongPollInFlight(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	leader, err := cg.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	own := newOwnConns(cg)
	defer own.closeAll()
	poll, isOwn := own.acquire(leader, true, false) // a long poll in flight
	if !isOwn || poll == leader {
		t.Fatal("a long poll did not go over the own connection")
	}
	if conn, isOwn := own.acquire(leader, false, false); isOwn || conn != leader {
		t.Fatal("a round answered at once went over the own connection, behind the long poll in flight there")
	}
	if conn, isOwn := own.acquire(leader, true, false); !isOwn || conn != poll {
		t.Fatal("a second long poll did not go over the same own connection")
	}
	own.release(1, poll, true)
	own.release(1, poll, true)
	if conn, isOwn := own.acquire(leader, false, false); !isOwn || conn != poll {
		t.Fatal("with no long poll in flight, a round answered at once did not go over the own connection")
	}
	own.release(1, poll, false)
}
