package fetch

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// rewritingDialer is a user's Net.Proxy.Dialer as it is often written to
// reach brokers whose advertised addresses are not reachable from the
// client (a port-forward, a NAT, a container network): it embeds
// net.Dialer and overrides Dial to map the advertised address to a
// reachable one. sarama only ever calls Dial (its Net.Proxy.Dialer is a
// proxy.Dialer), so every connection sarama opens goes to the mapped
// address. DialContext is net.Dialer's, promoted: it knows nothing of the
// mapping.
type rewritingDialer struct {
	*net.Dialer
	from, to string
	dials    atomic.Int32 // calls of Dial
}

func (d *rewritingDialer) Dial(network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	if addr == d.from {
		addr = d.to
	}
	return d.Dialer.Dial(network, addr)
}

// deadAddr returns an address nothing listens on (connection refused).
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// The fetcher's own connections are dialed the way sarama dials: through a
// user's proxy dialer's Dial. A user dialer that embeds net.Dialer and
// overrides Dial (to map advertised addresses, say) must have its Dial
// called, not the DialContext net.Dialer promotes (as first written, the
// own connections dialed the advertised address directly and every direct
// fetch failed, while the client reached the broker).
func TestOwnConnHonoursUserDialOverride(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	advertised := deadAddr(t)
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(advertised, broker.BrokerID()). // what the broker advertises
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	d := &rewritingDialer{Dialer: &net.Dialer{}, from: advertised, to: broker.Addr()}
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false
	conf.Metadata.Retry.Max = 0
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = d
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cg := &env{config: &Config{Config: conf}, client: client, log: slog.New(slog.DiscardHandler)}
	leader, err := client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := leader.Connected(); !ok {
		t.Fatalf("the client (sarama, through the user's Dial) cannot reach the leader either: %v", err)
	}
	busy, idle := newFetchers(cg) // Fetch.Batches false: busy still uses own connections
	defer idle.closeConns()
	defer busy.closeConns()
	before := d.dials.Load()
	r := busy.fetchUpTo(context.Background(), "t", 0, 0, 10)
	if r.err != nil || len(r.msgs) != 1 {
		t.Fatalf("first fetch over the busy fetcher's own connection: %d messages, err %v; the user's Dial was called %d time(s) for it "+
			"(connDialer dials through the DialContext net.Dialer promotes, to the advertised address, not through the user's Dial as sarama does)",
			len(r.msgs), r.err, d.dials.Load()-before)
	}
}

// A round that fails because the broker did not answer within
// Net.ReadTimeout (a hung broker, a connection whose peer vanished without
// a reset) is not sent again: it would wait Net.ReadTimeout again. The
// re-send is for a connection the broker closed as idle, which fails at
// once (EOF, reset). Here the broker never answers a fetch; the read
// timeout is 300 ms: the round goes to the broker once.
func TestTimedOutRoundNotResent(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	broker.SetHandlerByMap(map[string]sarama.MockResponse{ // no FetchRequest: never answered
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
	})
	cg := mockFetchGroup(t, broker)
	if _, err := cg.client.Leader("t", 0); err != nil {
		t.Fatal(err)
	}
	cg.config.Config.Net.ReadTimeout = 300 * time.Millisecond // the own connections' read timeout (ownConnConfig copies it)
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	start := time.Now()
	r := busy.fetchUpTo(context.Background(), "t", 0, 0, 10)
	took := time.Since(start)
	if r.err == nil {
		t.Fatalf("a fetch the broker never answered got no error")
	}
	fetches := 0
	for _, rr := range broker.History() {
		if _, ok := rr.Request.(*sarama.FetchRequest); ok {
			fetches++
		}
	}
	if fetches != 1 {
		t.Fatalf("the broker got %d fetch requests for one round that timed out (answered %v after %v, read timeout 300 ms): "+
			"a timed-out round is sent again and waits the read timeout again", fetches, r.err, took.Round(10*time.Millisecond))
	}
}
