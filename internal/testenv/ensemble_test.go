package testenv

import (
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

func TestEnsembleAddresses(t *testing.T) {
	t.Setenv("ZK_NODES", "")
	t.Setenv("ZK_ADDR", "")
	if n := ZKNodes(); n != 1 {
		t.Errorf("ZKNodes() without ZK_NODES = %d, want 1", n)
	}
	if a := ZKServerAddr(1); a != "127.0.0.1:2181" {
		t.Errorf("ZKServerAddr(1) of the default stack = %q", a)
	}
	t.Setenv("ZK_NODES", "3")
	t.Setenv("ZK_ADDR", "127.0.0.1:2281,127.0.0.1:2282,127.0.0.1:2283")
	if n := ZKNodes(); n != 3 {
		t.Errorf("ZKNodes() = %d, want 3", n)
	}
	if a := ZKServerAddr(2); a != "127.0.0.1:2282" {
		t.Errorf("ZKServerAddr(2) = %q, want 127.0.0.1:2282", a)
	}
	if s := ZKServers(); len(s) != 3 || s[2] != "127.0.0.1:2283" {
		t.Errorf("ZKServers() = %q", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("ZKServerAddr(4) of three servers did not panic")
		}
	}()
	ZKServerAddr(4)
}

// fakeServer answers every connection's four-letter command with answer.
func fakeServer(t *testing.T, answer string) string {
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
			buf := make([]byte, 4)
			_, _ = io.ReadFull(c, buf)
			if string(buf) == "srvr" {
				_, _ = io.WriteString(c, answer)
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

func TestZKMode(t *testing.T) {
	leader := fakeServer(t, "Zookeeper version: 3.8.4\nLatency min/avg/max: 0/0.0/0\nMode: leader\nNode count: 5\n")
	looking := fakeServer(t, "This ZooKeeper instance is not currently serving requests\n")
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = gone.Close()
	t.Setenv("ZK_ADDR", strings.Join([]string{leader, looking, gone.Addr().String()}, ","))
	for i, want := range []string{"leader", ModeNotServing, ModeUnreachable} {
		if got := ZKMode(i + 1); got != want {
			t.Errorf("ZKMode(%d) = %q, want %q", i+1, got, want)
		}
	}
}

func TestStackScriptIsFound(t *testing.T) {
	script, err := stackScript()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("stackScript() = %s: %v", script, err)
	}
}
