package kazoo

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// listen accepts connections on a loopback port and hands each to serve.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// closeSlack is how much longer than ConnectTimeout a failed NewKazoo may
// take: go-zookeeper's Close waits up to a second for a close request that
// its connect loop, exiting at that moment, never answers.
const closeSlack = 1500 * time.Millisecond

// TestNewKazooReportsLastDialError: with no server to talk to, NewKazoo
// gives up at ConnectTimeout and names the server and the reason.
func TestNewKazooReportsLastDialError(t *testing.T) {
	cases := []struct {
		name  string
		serve func(net.Conn)
		tls   *tls.Config
		want  string
	}{
		// Reads the client's hello as a frame length and hangs up, as a
		// plain ZooKeeper port does.
		{"plain port given TLS", func(c net.Conn) { var b [4]byte; _, _ = c.Read(b[:]); _ = c.Close() },
			&tls.Config{}, "not a TLS port"},
		{"server hangs up before answering", func(c net.Conn) { var b [64]byte; _, _ = c.Read(b[:]); _ = c.Close() },
			nil, "the connection failed before the server answered"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			addr := listen(t, c.serve)
			conf := NewConfig()
			conf.ConnectTimeout = 500 * time.Millisecond
			conf.TLS = c.tls
			start := time.Now()
			kz, err := NewKazoo([]string{addr}, conf)
			if err == nil {
				kz.Close()
				t.Fatal("connected")
			}
			// The ZooKeeper client's Close may wait up to a second for a
			// server it never reached.
			if took := time.Since(start); took > conf.ConnectTimeout+closeSlack {
				t.Errorf("took %v, ConnectTimeout %v", took, conf.ConnectTimeout)
			}
			var de *DialError
			if !errors.As(err, &de) || de.Server != addr || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q: want a *DialError for %s saying %q", err, addr, c.want)
			}
		})
	}
}

// TestTLSHandshakeDeadline: a server that accepts but never answers the
// handshake fails it at the deadline, not later.
func TestTLSHandshakeDeadline(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := listen(t, func(c net.Conn) { <-hold; _ = c.Close() })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = tlsHandshake(t.Context(), c, &tls.Config{}, addr, 200*time.Millisecond)
	if took := time.Since(start); err == nil || took > time.Second {
		t.Fatalf("handshake: %v after %v, want a timeout after 200ms", err, took)
	}
}
