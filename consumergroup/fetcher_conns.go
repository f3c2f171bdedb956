package consumergroup

import (
	"context"
	"net"
	"sync"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
)

// A fetcher with ownConns sends its rounds over connections of its own, one
// per broker: Kafka answers a connection's requests in order, so a long
// poll would hold up everything behind it. It dials them itself
// (connDialer) so that closeConns can shut them under a request in flight.
// See docs/batch-feed.md, "Two fetchers, connections of their own".

// connTo returns the connection to leader the fetcher's rounds use: the
// client's, or, with ownConns, one of the fetcher's own, opened on first
// use (nil once closeConns was called). f.mu is held.
func (f *roundFetcher) connTo(leader *sarama.Broker) *sarama.Broker {
	if !f.ownConns {
		return leader
	}
	if f.closed {
		return nil // opened now, nobody would close it
	}
	if f.conns == nil {
		f.conns = make(map[int32]*sarama.Broker)
		f.dialer = newConnDialer(f.cg.config.Config)
	}
	b, ok := f.conns[leader.ID()]
	if !ok || b.Addr() != leader.Addr() {
		if ok { // the leader moved; its old connection is idle (rounds go one at a time)
			old := b
			go func() { _ = old.Close() }()
		}
		b = sarama.NewBroker(leader.Addr())
		_ = b.Open(ownConnConfig(f.cg.config.Config, f.dialer)) // a failed dial fails the round's Fetch
		f.conns[leader.ID()] = b
	}
	return b
}

// dropConn forgets conn, the fetcher's own connection to broker id, after
// a round over it failed, and closes it: a sarama Broker whose connection
// broke fails every later request, so keeping it would fail every later
// round to that broker. The next round opens a new one. A connection that
// is not (or no longer) the fetcher's own is left alone: the client's, or
// one already replaced or closed.
func (f *roundFetcher) dropConn(id int32, conn *sarama.Broker) {
	f.mu.Lock()
	if f.conns[id] != conn {
		f.mu.Unlock()
		return
	}
	delete(f.conns, id)
	f.mu.Unlock()
	_ = conn.Close() // its round failed: nothing in flight to wait for
}

// ownConnConfig is conf for the fetcher's own connections: dialed through
// d (nil: as conf says), their metrics in conf's registry but never
// unregistered (see keptRegistry). Everything else is the client's, the
// read timeout included: Close does not wait for it (closeConns shuts the
// sockets), and a large response over a slow link needs it whole.
func ownConnConfig(conf *sarama.Config, d *connDialer) *sarama.Config {
	c := *conf
	if d != nil {
		c.Net.Proxy.Enable = true
		c.Net.Proxy.Dialer = d
	}
	if conf.MetricRegistry != nil {
		c.MetricRegistry = keptRegistry{conf.MetricRegistry}
	}
	return &c
}

// keptRegistry is a metrics registry whose metrics are never unregistered:
// a sarama Broker unregisters all its meters when it closes, and they are
// shared with the client's connections, which still update them.
type keptRegistry struct{ metrics.Registry }

// Unregister keeps the metric.
func (keptRegistry) Unregister(string) {}

// UnregisterAll keeps every metric.
func (keptRegistry) UnregisterAll() {}

// closeConns closes the fetcher's own connections and waits until its
// rounds are over. The sockets are shut first, so a round in flight fails
// at once instead of waiting for a long poll's answer; rounds after it
// fail (errFetcherClosed) instead of opening new connections. The group's
// teardown calls it once every feed has stopped.
func (f *roundFetcher) closeConns() {
	if !f.ownConns {
		return
	}
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = nil
	d := f.dialer
	f.mu.Unlock()
	if d != nil {
		d.closeAll()
	}
	for _, b := range conns {
		_ = b.Close()
	}
	f.rounds.Wait()
}

// dialer is what sarama's Net.Proxy.Dialer needs (and net.Dialer has).
type dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

// connDialer dials the fetcher's own connections the way sarama would
// (through the configured proxy, or with the Net dial settings) and keeps
// each socket it opened, so closeAll can shut them under a request in
// flight, and cancel the dials in progress.
type connDialer struct {
	inner  dialer
	ctx    context.Context // ends with closeAll
	cancel context.CancelFunc

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

func newConnDialer(conf *sarama.Config) *connDialer {
	var inner dialer = &net.Dialer{Timeout: conf.Net.DialTimeout, KeepAlive: conf.Net.KeepAlive, LocalAddr: conf.Net.LocalAddr}
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		inner = conf.Net.Proxy.Dialer
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &connDialer{inner: inner, ctx: ctx, cancel: cancel, open: make(map[net.Conn]struct{})}
}

// dial dials through the inner dialer, as sarama would (its Dial: a user's
// dialer may override Dial, e.g. to map advertised addresses), and gives
// up when d.ctx ends first: net.Dialer's dial is cancelled; another
// dialer's goes on, and the socket it may still return is closed.
func (d *connDialer) dial(network, addr string) (net.Conn, error) {
	if nd, ok := d.inner.(*net.Dialer); ok {
		return nd.DialContext(d.ctx, network, addr)
	}
	type dialed struct {
		c   net.Conn
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		c, err := d.inner.Dial(network, addr)
		done <- dialed{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-d.ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, errFetcherClosed
	}
}

// Dial opens a socket and keeps it until it is closed; after closeAll it
// fails.
func (d *connDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := d.dial(network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return nil, errFetcherClosed
	}
	d.open[c] = struct{}{}
	return &trackedConn{Conn: c, d: d}, nil
}

// closeAll cancels the dials in progress, shuts every socket still open
// and fails later dials.
func (d *connDialer) closeAll() {
	d.cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for c := range d.open {
		_ = c.Close()
		delete(d.open, c)
	}
}

// trackedConn is a socket of a connDialer's; closing it forgets it.
type trackedConn struct {
	net.Conn
	d *connDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.open, c.Conn)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
