package fetch

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// An own connection is opened by sarama (dial, TLS, SASL), and then
// carries only the fetchers' Fetch requests: those the fetchers write and
// read themselves, on the socket under sarama's Broker, so that the
// response comes as bytes, for decodeFetchResponse. sarama's Broker then
// sends nothing more on it; closing it (or the Dialer) still shuts the
// socket. TLS is set up by the socket's dialer (socketCapture), as sarama
// would, so that the socket kept is the one that carries plain requests.
// See docs/batch-feed.md, "Decoding".

// socketCapture dials an own connection's socket through inner, with TLS
// when tlsConf is set, and keeps it.
type socketCapture struct {
	inner   dialer
	tlsConf *tls.Config   // nil: no TLS
	timeout time.Duration // the TLS handshake's (Net.DialTimeout; 0: none)

	mu     sync.Mutex
	socket net.Conn
}

// Dial implements sarama's Net.Proxy.Dialer.
func (c *socketCapture) Dial(network, addr string) (net.Conn, error) {
	conn, err := c.inner.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	if c.tlsConf != nil {
		// Handshake now, bounded: sarama would handshake on its first
		// request, under the read deadline it sets for TLS.
		tc := tls.Client(conn, serverNamed(addr, c.tlsConf))
		if c.timeout > 0 {
			_ = tc.SetDeadline(time.Now().Add(c.timeout))
		}
		if err := tc.Handshake(); err != nil {
			_ = conn.Close()
			return nil, err
		}
		_ = tc.SetDeadline(time.Time{})
		conn = tc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.socket = conn
	return conn, nil
}

// serverNamed is cfg with the server name taken from addr when it names
// none, as sarama sets it.
func serverNamed(addr string, cfg *tls.Config) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	c := cfg.Clone()
	c.ServerName, _, _ = net.SplitHostPort(addr)
	return c
}

// dialer is what sarama's Net.Proxy.Dialer needs.
type dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

// capturingConfig returns conf dialing through a new socketCapture over
// inner, which takes over conf's TLS.
func capturingConfig(conf *sarama.Config, inner dialer) (*sarama.Config, *socketCapture) {
	capture := &socketCapture{inner: inner, timeout: conf.Net.DialTimeout}
	c := *conf
	if c.Net.TLS.Enable {
		capture.tlsConf = c.Net.TLS.Config
		if capture.tlsConf == nil {
			capture.tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		c.Net.TLS.Enable, c.Net.TLS.Config = false, nil
	}
	c.Net.Proxy.Enable, c.Net.Proxy.Dialer = true, capture
	return &c, capture
}

// ownFetchConn sends Fetch requests over an own connection's socket.
type ownFetchConn struct {
	broker  *sarama.Broker // sarama's, which opened the socket
	capture *socketCapture
	conf    *sarama.Config

	mu          sync.Mutex // one request at a time, as sarama's Broker sends them
	ready       bool       // opened and the version chosen
	socket      net.Conn
	version     int16
	correlation int32
	// broken: a round failed between writing its request and reading its
	// whole response, so what is left on the socket (the rest of a
	// response, a late one) belongs to no later round. The socket is shut.
	broken bool
}

// start waits for sarama to open the connection and chooses the Fetch
// version: fetchVersion's, lowered to what the broker's ApiVersions answer
// allows, as sarama would. c.mu is held.
func (c *ownFetchConn) start() error {
	if c.ready {
		return nil
	}
	if ok, err := c.broker.Connected(); !ok { // waits for Open
		if err == nil {
			err = sarama.ErrNotConnected
		}
		return err
	}
	v, err := c.negotiatedVersion()
	if err != nil {
		return err
	}
	c.capture.mu.Lock()
	c.socket = c.capture.socket
	c.capture.mu.Unlock()
	if c.socket == nil {
		return sarama.ErrNotConnected
	}
	c.version, c.ready = v, true
	return nil
}

// negotiatedVersion returns fetchVersion's version, lowered to what the
// broker's ApiVersions answer allows where sarama asks it
// (Net.ApiVersionsRequest, from Kafka 2.4), as sarama would lower it.
func (c *ownFetchConn) negotiatedVersion() (int16, error) {
	v := fetchVersion(c.conf.Version)
	if !c.conf.ApiVersionsRequest || !c.conf.Version.IsAtLeast(sarama.V2_4_0_0) {
		return v, nil
	}
	versions, err := c.broker.ApiVersions(&sarama.ApiVersionsRequest{})
	if err != nil {
		return 0, err
	}
	if versions.ErrorCode != 0 {
		return 0, sarama.KError(versions.ErrorCode)
	}
	for _, k := range versions.ApiKeys {
		if k.ApiKey == 1 { // Fetch
			if v = min(v, max(min(v, k.MaxVersion), k.MinVersion)); v < 5 {
				return 0, sarama.ErrUnsupportedVersion
			}
			return v, nil
		}
	}
	return 0, sarama.ErrUnsupportedVersion
}

// fetch sends one Fetch request for batch and returns the decoded
// response. An error is the request's (the connection is then dropped),
// or a sarama.PacketDecodingError for a response that does not decode.
func (c *ownFetchConn) fetch(req fetchRequestFields, batch []*fetchWant) (*fetchAnswer, error) {
	body, version, err := c.roundTrip(req, batch)
	if err != nil {
		return nil, err
	}
	a, err := decodeFetchResponse(body, version)
	if err == nil {
		err = topLevelError(a.errCode)
	}
	return a, err
}

// roundTrip sends one Fetch request for batch and returns its response's
// body (after the header) and version. A round that fails on the socket
// shuts it: later rounds over the connection fail as over a closed one
// (and are sent again over a new one) rather than read what this round
// left unread.
func (c *ownFetchConn) roundTrip(req fetchRequestFields, batch []*fetchWant) (_ []byte, _ int16, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.start(); err != nil {
		return nil, 0, err
	}
	if c.broken {
		return nil, 0, fmt.Errorf("fetch: own connection given up by an earlier round: %w", net.ErrClosed)
	}
	defer func() {
		if err != nil {
			c.broken = true
			_ = c.socket.Close()
		}
	}()
	c.correlation++
	req.version = c.version
	msg := encodeFetchRequest(req, c.correlation, c.conf.ClientID, batch)
	now := time.Now()
	received := 0
	defer func() { c.countRound(len(msg), received, time.Since(now), batch) }()
	if err := c.socket.SetDeadline(now.Add(c.conf.Net.WriteTimeout)); err != nil {
		return nil, 0, err
	}
	if _, err := c.socket.Write(msg); err != nil {
		return nil, 0, err
	}
	if err := c.socket.SetReadDeadline(time.Now().Add(c.conf.Net.ReadTimeout)); err != nil {
		return nil, 0, err
	}
	var head [8]byte // size, correlation id
	if _, err := io.ReadFull(c.socket, head[:]); err != nil {
		return nil, 0, err
	}
	size := int32(binary.BigEndian.Uint32(head[:]))
	if id := int32(binary.BigEndian.Uint32(head[4:])); id != c.correlation {
		return nil, 0, fmt.Errorf("fetch response: correlation id %d, want %d", id, c.correlation)
	}
	if size < 4 || size > sarama.MaxResponseSize {
		return nil, 0, fmt.Errorf("fetch response: size %d", size)
	}
	body := make([]byte, size-4)
	if _, err := io.ReadFull(c.socket, body); err != nil {
		return nil, 0, err
	}
	received = len(head) + len(body)
	if c.version >= 12 { // the response header's tagged fields
		r := &wireReader{buf: body, flexible: true}
		r.skipTags()
		if r.err != nil {
			return nil, 0, r.err
		}
		body = body[r.off:]
	}
	return body, c.version, nil
}
