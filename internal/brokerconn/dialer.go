package brokerconn

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
)

// ErrClosed fails a dial after, or during, Dialer.CloseAll.
var ErrClosed = errors.New("brokerconn: closed")

// Config is conf for connections of the group's own: dialed through
// d (nil: as conf says), their metrics in conf's registry but never
// unregistered (see keptRegistry). Everything else is the client's, the
// read timeout included: closing does not wait for it (CloseAll shuts the
// sockets), and a large response over a slow link needs it whole.
func Config(conf *sarama.Config, d *Dialer) *sarama.Config {
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

// dialer is what sarama's Net.Proxy.Dialer needs (and net.Dialer has).
type dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

// Dialer dials the group's own connections the way sarama would
// (through the configured proxy, or with the Net dial settings) and keeps
// each socket it opened, so CloseAll can shut them under a request in
// flight, and cancel the dials in progress.
type Dialer struct {
	inner  dialer
	ctx    context.Context // ends with CloseAll
	cancel context.CancelFunc

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

// NewDialer returns a Dialer dialing as conf says.
func NewDialer(conf *sarama.Config) *Dialer {
	var inner dialer = &net.Dialer{Timeout: conf.Net.DialTimeout, KeepAlive: conf.Net.KeepAlive, LocalAddr: conf.Net.LocalAddr}
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		inner = conf.Net.Proxy.Dialer
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dialer{inner: inner, ctx: ctx, cancel: cancel, open: make(map[net.Conn]struct{})}
}

// dial dials through the inner dialer, as sarama would (its Dial: a user's
// dialer may override Dial, e.g. to map advertised addresses), and gives
// up when d.ctx ends first: net.Dialer's dial is cancelled; another
// dialer's goes on, and the socket it may still return is closed.
func (d *Dialer) dial(network, addr string) (net.Conn, error) {
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
		return nil, ErrClosed
	}
}

// Dial opens a socket and keeps it until it is closed; after CloseAll it
// fails.
func (d *Dialer) Dial(network, addr string) (net.Conn, error) {
	c, err := d.dial(network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return nil, ErrClosed
	}
	d.open[c] = struct{}{}
	return &trackedConn{Conn: c, d: d}, nil
}

// CloseAll cancels the dials in progress, shuts every socket still open
// and fails later dials.
func (d *Dialer) CloseAll() {
	d.cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for c := range d.open {
		_ = c.Close()
		delete(d.open, c)
	}
}

// trackedConn is a socket of a Dialer's; closing it forgets it.
type trackedConn struct {
	net.Conn
	d *Dialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.open, c.Conn)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
