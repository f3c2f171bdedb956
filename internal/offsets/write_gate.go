package offsets

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// writeGate lets a commit's request be written to the commit connection's
// socket only while closing is open and the commit's deadline has not
// passed: the last check, under sarama (and under TLS), right as the bytes
// go out. Unarmed (the connection's handshakes), it only checks closing.
type writeGate struct {
	closing <-chan struct{}

	mu     sync.Mutex
	cur    *gatedWrite // the commit armed; nil: none
	closed bool        // shut: nothing is let through any more
}

// gatedWrite is one commit's passage through a writeGate.
type gatedWrite struct {
	deadline time.Time // zero: none
	wrote    bool      // a write of its was let through
}

// arm lets the writes of one commit through until deadline.
func (g *writeGate) arm(deadline time.Time) *gatedWrite {
	w := &gatedWrite{deadline: deadline}
	g.mu.Lock()
	g.cur = w
	g.mu.Unlock()
	return w
}

func (g *writeGate) disarm() {
	g.mu.Lock()
	g.cur = nil
	g.mu.Unlock()
}

// shut lets nothing through any more.
func (g *writeGate) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// wrote reports whether a write of w was let through; once the gate is
// shut, that is final.
func (g *writeGate) wrote(w *gatedWrite) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return w.wrote
}

// allow reports whether a write may go out now.
func (g *writeGate) allow() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.cur
	switch {
	case g.closed || isClosed(g.closing):
		g.closed = true
		return ErrGroupClosing
	case w == nil:
		return nil
	case !w.deadline.IsZero() && !time.Now().Before(w.deadline):
		return fmt.Errorf("the request was to be written after the commit's deadline: %w", errKafkaCommitDeadline)
	}
	w.wrote = true
	return nil
}

// gatedDialer dials through a connDialer and puts gate on the sockets.
type gatedDialer struct {
	d    Dialer
	gate *writeGate
}

func (d gatedDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := d.d.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return gatedConn{Conn: c, gate: d.gate}, nil
}

// gatedConn is a socket whose writes its gate allows.
type gatedConn struct {
	net.Conn
	gate *writeGate
}

func (c gatedConn) Write(p []byte) (int, error) {
	if err := c.gate.allow(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
