package testenv

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// ZKCounter is a loopback proxy in front of ZooKeeper that counts the
// requests its clients send, by opcode class: writes (create, delete,
// setData, multi, ...: each one transaction, however many operations a
// multi holds), reads (exists, getData, getChildren, ...), pings and the
// rest (watch re-registration, auth, close). It parses only the client's
// side of the stream: a 4-byte length, then (after the connect request,
// which it skips) the xid and the opcode of each request.
type ZKCounter struct {
	ln                          net.Listener
	target                      string
	writes, reads, pings, other atomic.Int64 // by opcode class
	wg                          sync.WaitGroup
	mu                          sync.Mutex
	conns                       []net.Conn
	byKind                      map[string]int64 // "<opcode> <node kind>": requests (under mu)
}

// ZKCounts is a snapshot of a ZKCounter: requests sent, by class.
type ZKCounts struct{ Writes, Reads, Pings, Other int64 }

// Minus is what was sent between snapshot b and a.
func (a ZKCounts) Minus(b ZKCounts) ZKCounts {
	return ZKCounts{a.Writes - b.Writes, a.Reads - b.Reads, a.Pings - b.Pings, a.Other - b.Other}
}

// NewZKCounter starts a counting proxy in front of the ZooKeeper server at
// target; it stops when the test ends.
func NewZKCounter(t testing.TB, target string) *ZKCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &ZKCounter{ln: ln, target: target}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(c.close)
	return c
}

// Addr is the address clients connect to.
func (c *ZKCounter) Addr() string { return c.ln.Addr().String() }

// Counts is what the clients sent so far.
func (c *ZKCounter) Counts() ZKCounts {
	return ZKCounts{c.writes.Load(), c.reads.Load(), c.pings.Load(), c.other.Load()}
}

func (c *ZKCounter) close() {
	_ = c.ln.Close()
	c.mu.Lock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *ZKCounter) accept() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, client, server)
		c.mu.Unlock()
		c.wg.Add(2)
		go func() {
			defer c.wg.Done()
			_, _ = io.Copy(client, server)
			_ = client.Close()
		}()
		go func() {
			defer c.wg.Done()
			c.requests(client, server)
			_ = server.Close()
		}()
	}
}

// requests forwards the client's frames to the server, counting each.
func (c *ZKCounter) requests(client, server net.Conn) {
	first := true
	head := make([]byte, 4)
	for {
		if _, err := io.ReadFull(client, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head))
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		if !first && len(body) >= 8 {
			op := int32(binary.BigEndian.Uint32(body[4:8]))
			c.classify(op)
			c.note(op, body[8:])
		}
		first = false
		if _, err := server.Write(append(head, body...)); err != nil {
			return
		}
		head = make([]byte, 4)
	}
}

func (c *ZKCounter) classify(op int32) {
	switch op {
	case 1, 2, 5, 7, 13, 14, 15, 16, 19, 21: // create, delete, setData, setACL, check, multi, create2, reconfig, createContainer, createTTL
		c.writes.Add(1)
	case 3, 4, 6, 8, 9, 12, 103, 104: // exists, getData, getACL, getChildren, sync, getChildren2, getEphemerals, getAllChildrenNumber
		c.reads.Add(1)
	case 11:
		c.pings.Add(1)
	default: // setWatches, auth, closeSession, ...
		c.other.Add(1)
	}
}

// ByKind is how many requests the clients sent by opcode and by the kind
// of node the request names first (the child of /consumers/<group> it is
// under: owners, offsets, epochs, ids; or brokers, other), e.g.
// "getData owners". A multi counts once, as "multi".
func (c *ZKCounter) ByKind() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.byKind))
	for k, v := range c.byKind {
		out[k] = v
	}
	return out
}

var opNames = map[int32]string{1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 8: "getChildren",
	12: "getChildren2", 13: "check", 14: "multi", 11: "ping", 101: "setWatches", 105: "setWatches2", 106: "addWatch"}

// note counts the request by opcode and node kind; rest is the request
// after its header.
func (c *ZKCounter) note(op int32, rest []byte) {
	name, ok := opNames[op]
	if !ok {
		name = "op" + strconv.Itoa(int(op))
	}
	kind := ""
	switch op {
	case 1, 2, 3, 4, 5, 8, 12, 13:
		kind = " " + nodeKind(rest)
	}
	c.mu.Lock()
	if c.byKind == nil {
		c.byKind = map[string]int64{}
	}
	c.byKind[name+kind]++
	c.mu.Unlock()
}

// nodeKind reads the path at the start of a request's body and names its
// kind.
func nodeKind(b []byte) string {
	if len(b) < 4 {
		return "?"
	}
	n := int(binary.BigEndian.Uint32(b[:4]))
	if n < 0 || 4+n > len(b) {
		return "?"
	}
	parts := strings.Split(strings.TrimPrefix(string(b[4:4+n]), "/"), "/")
	for i, p := range parts {
		if p == "consumers" && i+2 < len(parts) {
			return parts[i+2]
		}
		if p == "brokers" {
			return "brokers"
		}
	}
	return "other"
}
