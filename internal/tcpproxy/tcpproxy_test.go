package tcpproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer answers every line with the same line until closed.
func echoServer(t *testing.T) string { return recordingServer(t, nil) }

func roundTrip(c net.Conn, msg string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return line[:len(line)-1], nil
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestCutRestoreClose(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	c1 := dial(t, p.Addr())
	if got, err := roundTrip(c1, "hello"); err != nil || got != "hello" {
		t.Fatalf("through the proxy: got %q, %v", got, err)
	}

	p.Cut()
	// The open connection is dropped: the client reads EOF (or a reset).
	if _, err := roundTrip(c1, "after cut"); err == nil {
		t.Fatal("a connection open across Cut still works")
	} else if isTimeout(err) {
		t.Fatalf("a connection open across Cut hangs instead of being dropped: %v", err)
	}
	// New connections are closed as soon as they are accepted.
	c2 := dial(t, p.Addr())
	if _, err := roundTrip(c2, "while cut"); err == nil || isTimeout(err) {
		t.Fatalf("a connection made while cut: err = %v, want it closed at once", err)
	}

	p.Restore()
	c3 := dial(t, p.Addr())
	if got, err := roundTrip(c3, "again"); err != nil || got != "again" {
		t.Fatalf("after Restore: got %q, %v", got, err)
	}

	addr := p.Addr()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(c3, "after close"); err == nil {
		t.Fatal("a connection open across Close still works")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatal("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestUnreachableTarget(t *testing.T) {
	// A port nobody listens on: reserve one and release it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	_ = ln.Close()

	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, "x"); err == nil || isTimeout(err) {
		t.Fatalf("with an unreachable target: err = %v, want the connection closed", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// recordingServer echoes every line and, when got is not nil, sends each
// line it received on got.
func recordingServer(t *testing.T, got chan<- string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if got != nil {
						got <- line[:len(line)-1]
					}
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func TestLoseReplies(t *testing.T) {
	got := make(chan string, 10)
	p, err := New(recordingServer(t, got))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dial(t, p.Addr())
	if r, err := roundTrip(c, "before"); err != nil || r != "before" {
		t.Fatalf("through the proxy: got %q, %v", r, err)
	}
	<-got

	lost := make(chan struct{})
	go func() { defer close(lost); p.LoseReplies(300 * time.Millisecond) }()
	time.Sleep(50 * time.Millisecond) // muted by now
	r, err := roundTrip(c, "applied")
	if err == nil || isTimeout(err) {
		t.Fatalf("reply during LoseReplies: got %q, %v; want the connection dropped", r, err)
	}
	if s := <-got; s != "applied" {
		t.Fatalf("the server received %q, want the request whose reply was lost", s)
	}
	<-lost
	c2 := dial(t, p.Addr())
	if r, err := roundTrip(c2, "after"); err != nil || r != "after" {
		t.Fatalf("after LoseReplies: got %q, %v", r, err)
	}
}
