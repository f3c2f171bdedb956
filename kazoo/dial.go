package kazoo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// The ZooKeeper client dials its servers in a loop that never gives up and
// only logs why a connection failed. NewKazoo needs that reason when no
// session comes in time ("certificate signed by unknown authority" says far
// more than "no session within 10s"), so every connection is dialled
// through dialer, which keeps the last failure, naming the server.

// dialErrors remembers the last error met while connecting to a server:
// a failed dial or TLS handshake, or a connection the server closed before
// answering the connect request (a TLS 1.3 server rejects a client's
// certificate only after the client's side of the handshake completed).
type dialErrors struct {
	mu   sync.Mutex
	last error
}

func (d *dialErrors) record(err error) {
	d.mu.Lock()
	d.last = err
	d.mu.Unlock()
}

// get returns the last recorded error, or nil.
func (d *dialErrors) get() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// handshakeFloor is the least time a TLS handshake is given: the client's
// dial timeout (1 s) is too short for a cold server's first handshake.
const handshakeFloor = 2 * time.Second

// dialer returns the dialer of the connection: plain TCP, or TLS when
// kz.conf.TLS is set, recording failures in kz.dialErrs.
func (kz *Kazoo) dialer() zk.Dialer {
	tlsConf := kz.conf.TLS
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(kz.dialCtx, network, address)
		if err == nil && tlsConf != nil {
			// A third of the session timeout, at least handshakeFloor: a
			// server that accepts connections but never completes a
			// handshake must not hold the client for a whole session.
			c, err = tlsHandshake(kz.dialCtx, c, tlsConf, address, max(handshakeFloor, kz.SessionTimeout()/3))
		}
		if err != nil {
			err = &DialError{Server: address, Err: err}
			kz.dialErrs.record(err)
			return nil, err
		}
		return &answerWatch{Conn: c, server: address, errs: &kz.dialErrs}, nil
	}
}

// tlsHandshake runs the client side of a TLS handshake on c within timeout,
// or until ctx ends. An empty ServerName is set to the host part of
// address, so the server's certificate is checked against the address
// dialled.
func tlsHandshake(ctx context.Context, c net.Conn, conf *tls.Config, address string, timeout time.Duration) (net.Conn, error) {
	conf = conf.Clone()
	if conf.ServerName == "" {
		if host, _, err := net.SplitHostPort(address); err == nil {
			conf.ServerName = host
		}
	}
	tc := tls.Client(c, conf)
	_ = tc.SetDeadline(time.Now().Add(timeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		if isClosedByPeer(err) {
			return nil, fmt.Errorf("TLS handshake: the server closed the connection (not a TLS port?): %w", err)
		}
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}

func isClosedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// DialError is a failure to connect to one ZooKeeper server: the dial, the
// TLS handshake, or a connection closed before the server answered.
// NewKazoo wraps the last one in its error when no session comes within
// Config.ConnectTimeout.
type DialError struct {
	Server string // "host:port"
	Err    error
}

func (e *DialError) Error() string { return e.Server + ": " + e.Err.Error() }

// Unwrap returns the cause (a *tls.CertificateVerificationError, say).
func (e *DialError) Unwrap() error { return e.Err }

// answerWatch records the error of a connection that fails before its
// first byte is read: the server refused the client (a TLS alert about the
// client's certificate) or is not speaking the protocol. Only the client's
// single reader goroutine reads a connection, so answered needs no lock.
type answerWatch struct {
	net.Conn
	server   string
	errs     *dialErrors
	answered bool
}

func (c *answerWatch) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.answered {
		if n > 0 {
			c.answered = true
		} else if err != nil {
			c.errs.record(&DialError{Server: c.server, Err: fmt.Errorf("the connection failed before the server answered: %w", err)})
		}
	}
	return n, err
}
