package testenv

import (
	"net"
	"testing"
)

// A connection this process opens to a listener of its own shows twice:
// once to the listener's address (the dialing end), once to the dialer's
// (the accepted end).
func TestEstablishedConnsCountsOwnConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	counts, err := EstablishedConns()
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[ln.Addr().String()]; n != 1 {
		t.Fatalf("%d established connections to %s, want 1 (counted: %v)", n, ln.Addr(), counts)
	}
	if n := counts[c.LocalAddr().String()]; n != 1 {
		t.Fatalf("%d established connections to %s, want 1 (counted: %v)", n, c.LocalAddr(), counts)
	}
}

func TestProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:2384":                         "127.0.0.1:9092",
		"0000000000000000FFFF00000100007F:0885": "127.0.0.1:2181",
		"00000000000000000000000001000000:1F90": "[::1]:8080",
	} {
		if got, err := procAddr(in); err != nil || got != want {
			t.Errorf("procAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
