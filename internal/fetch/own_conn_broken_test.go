package fetch

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// rawBroker listens on a raw socket and hands the test each request's
// correlation id and the connection, so that it answers as it likes: late,
// cut, or with another request's bytes.
func rawBroker(t *testing.T) (addr string, accepted <-chan net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	conns := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { _ = c.Close() })
		conns <- c
	}()
	return ln.Addr().String(), conns
}

// readRequest reads one size-prefixed request off c and returns its
// correlation id.
func readRequest(t *testing.T, c net.Conn) int32 {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Errorf("read request: %v", err)
		return -1
	}
	msg := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, msg); err != nil {
		t.Errorf("read request: %v", err)
		return -1
	}
	return int32(binary.BigEndian.Uint32(msg[4:8]))
}

// emptyFetchResponse is a framed Fetch v8 response to correlation with no
// partitions.
func emptyFetchResponse(correlation int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, 4+14)
	b = binary.BigEndian.AppendUint32(b, uint32(correlation))
	return append(b, make([]byte, 14)...) // throttle, error, session, no topics
}

// openOwnFetchConn opens an own connection's fetch side to addr as
// ownConns.acquire does, at Fetch v8, with readTimeout.
func openOwnFetchConn(t *testing.T, addr string, readTimeout time.Duration) *ownFetchConn {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_0_0_0
	conf.ApiVersionsRequest = false // a raw broker does not answer it
	conf.Net.ReadTimeout = readTimeout
	c, capture := capturingConfig(conf, &net.Dialer{})
	broker := leaderWithID(addr, 1)
	if err := broker.Open(c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = broker.Close() })
	return &ownFetchConn{broker: broker, capture: capture, conf: c}
}

var oneWant = []*fetchWant{{ctx: context.Background(), topic: "t", partition: 0, offset: 0, size: 1 << 20, limit: 10}}

// A round that fails between writing its request and reading the whole
// response leaves what the broker sends after it on the socket: the next
// round over the connection (the other fetcher's, waiting for it) must
// read none of it as its own answer, and fail as over a closed connection
// (sent again over a new one). The broker answers the first request with
// early at once, then, once the round timed out, waits for the next
// request and writes late (nextSent: the next request came).
func TestOwnConnectionRoundAfterBrokenRoundFailsAsClosed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		early func(first int32) []byte
		late  func(first int32, nextSent bool) []byte
	}{{
		// The response cut by the read timeout: its rest frames as a
		// response with the next round's correlation id.
		name: "cut response",
		early: func(first int32) []byte {
			rest := emptyFetchResponse(first + 1)
			head := binary.BigEndian.AppendUint32(nil, uint32(4+len(rest)))
			return binary.BigEndian.AppendUint32(head, uint32(first))
		},
		late: func(first int32, nextSent bool) []byte {
			if !nextSent {
				return nil // the next round wrote nothing: the connection was given up
			}
			return emptyFetchResponse(first + 1) // the first response's rest, late
		},
	}, {
		// The round timed out before its response came: the late response
		// comes, then one for the next round if it wrote.
		name:  "timed out before the response",
		early: func(int32) []byte { return nil },
		late: func(first int32, nextSent bool) []byte {
			b := emptyFetchResponse(first)
			if nextSent {
				b = append(b, emptyFetchResponse(first+1)...)
			}
			return b
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			addr, accepted := rawBroker(t)
			c := openOwnFetchConn(t, addr, 200*time.Millisecond)
			served := make(chan struct{})
			go func() {
				defer close(served)
				conn := <-accepted
				first := readRequest(t, conn)
				_, _ = conn.Write(tc.early(first)) // then nothing until the round timed out
				_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
				var size [4]byte
				_, err := io.ReadFull(conn, size[:])
				_, _ = conn.Write(tc.late(first, err == nil))
			}()
			if _, err := c.fetch(fetchRequestFields{maxBytes: 1 << 20}, oneWant); err == nil {
				t.Fatal("first round answered: want its read timeout")
			}
			a, err := c.fetch(fetchRequestFields{maxBytes: 1 << 20}, oneWant)
			if err == nil {
				t.Fatalf("second round answered by the first response's bytes (%d partitions)", len(a.partitions))
			}
			if !connectionClosed(err) {
				t.Fatalf("second round: %v, want a closed connection (so the round is sent again over a new one)", err)
			}
			<-served
		})
	}
}
