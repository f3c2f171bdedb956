package main

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer accepts connections and echoes what it reads, until the test
// ends.
func echoServer(t *testing.T) string {
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
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

func startLink(t *testing.T) *link {
	t.Helper()
	l, err := newLink("test 1->2", 1, 2, "127.0.0.1:0", echoServer(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l
}

func dial(t *testing.T, l *link) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads the reply within d: the reply, or the
// read error (a timeout when nothing came back, EOF or a reset when the
// connection was closed).
func roundTrip(c net.Conn, msg string, d time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func TestLinkForwardsWhenOpen(t *testing.T) {
	l := startLink(t)
	c := dial(t, l)
	if got, err := roundTrip(c, "hello", 2*time.Second); err != nil || got != "hello" {
		t.Fatalf("round trip: %q, %v", got, err)
	}
}

func TestLinkSilentCutKeepsConnectionsButDropsBytes(t *testing.T) {
	l := startLink(t)
	c := dial(t, l)
	if _, err := roundTrip(c, "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	l.set(silent)
	if got, err := roundTrip(c, "b", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("existing connection under a silent cut: got %q, %v; want no answer and no close", got, err)
	}
	fresh := dial(t, l)
	if got, err := roundTrip(fresh, "c", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("new connection under a silent cut: got %q, %v; want no answer and no close", got, err)
	}

	l.set(open)
	for _, cc := range []net.Conn{c, fresh} {
		if _, err := roundTrip(cc, "d", 2*time.Second); err == nil || isTimeout(err) {
			t.Fatalf("connection that lost bytes after heal: %v; want it closed", err)
		}
	}
	after := dial(t, l)
	if got, err := roundTrip(after, "e", 2*time.Second); err != nil || got != "e" {
		t.Fatalf("new connection after heal: %q, %v", got, err)
	}
}

func TestLinkResetCutClosesConnections(t *testing.T) {
	l := startLink(t)
	c := dial(t, l)
	if _, err := roundTrip(c, "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	l.set(reset)
	if _, err := roundTrip(c, "b", 2*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("existing connection under a reset cut: %v; want it closed", err)
	}
	fresh := dial(t, l)
	if _, err := roundTrip(fresh, "c", 2*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("new connection under a reset cut: %v; want it closed", err)
	}
	l.set(open)
	after := dial(t, l)
	if got, err := roundTrip(after, "d", 2*time.Second); err != nil || got != "d" {
		t.Fatalf("new connection after heal: %q, %v", got, err)
	}
}

func TestParseCuts(t *testing.T) {
	cuts, err := parseCuts("# comment\n1\n\n3 reset\n2 silent\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]mode{1: silent, 2: silent, 3: reset}
	if len(cuts) != len(want) {
		t.Fatalf("cuts %v, want %v", cuts, want)
	}
	for id, m := range want {
		if cuts[id] != m {
			t.Fatalf("cuts %v, want %v", cuts, want)
		}
	}
	for _, bad := range []string{"x", "0", "1 loud", "1 silent extra"} {
		if _, err := parseCuts(bad); err == nil {
			t.Errorf("parseCuts(%q) accepted", bad)
		}
	}
	if m := linkMode(map[int]mode{1: silent, 2: reset}, 1, 2); m != reset {
		t.Errorf("linkMode with silent and reset ends = %v, want reset", m)
	}
	if m := linkMode(map[int]mode{3: silent}, 1, 2); m != open {
		t.Errorf("linkMode of an uncut link = %v, want open", m)
	}
}

func TestParseLinkSpec(t *testing.T) {
	s, err := parseLinkSpec("quorum:1:2:3187:3182")
	if err != nil || s != (linkSpec{"quorum", 1, 2, 3187, 3182}) {
		t.Fatalf("parseLinkSpec: %+v, %v", s, err)
	}
	for _, bad := range []string{"quorum:1:1:3:4", "quorum:1:2:3", ":1:2:3:4", "q:a:2:3:4"} {
		if _, err := parseLinkSpec(bad); err == nil {
			t.Errorf("parseLinkSpec(%q) accepted", bad)
		}
	}
}

// A server that connects to a peer a moment before the peer listens (a
// leader just elected) must get through, not be reset.
func TestLinkWaitsForATargetAboutToListen(t *testing.T) {
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := probe.Addr().String()
	_ = probe.Close()
	l, err := newLink("test 1->2", 1, 2, "127.0.0.1:0", target, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	c := dial(t, l)

	time.Sleep(300 * time.Millisecond)
	ln, err := net.Listen("tcp", target)
	if err != nil {
		t.Fatalf("listen on %s: %v", target, err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_, _ = io.Copy(s, s)
	}()
	if got, err := roundTrip(c, "late", 3*time.Second); err != nil || got != "late" {
		t.Fatalf("round trip to a target that listened 300 ms late: %q, %v", got, err)
	}
}

// Under a silent cut, one side closing its connection is hidden from the
// other side too, as across a real partition.
func TestLinkSilentCutHidesAClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l, err := newLink("test 1->2", 1, 2, "127.0.0.1:0", ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	c := dial(t, l)
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); err != nil { // wait until forwarded
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(s, buf); err != nil {
		t.Fatal(err)
	}

	l.set(silent)
	_ = s.Close()
	if got, err := roundTrip(c, "y", 500*time.Millisecond); !isTimeout(err) {
		t.Fatalf("client of a peer that closed behind a silent cut: got %q, %v; want silence", got, err)
	}
	l.set(open)
	if _, err := roundTrip(c, "z", 2*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("after heal: %v; want the connection closed", err)
	}
}
