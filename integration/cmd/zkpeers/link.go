package main

import (
	"errors"
	"io"
	"log"
	"net"
	"sync"
	"syscall"
	"time"
)

// mode is the state of a link between two servers.
type mode int

const (
	// open forwards bytes both ways.
	open mode = iota
	// silent is a partition that nobody is told about: connections stay
	// established but every byte is discarded in both directions, and new
	// connections are accepted but never reach the peer. Each side notices
	// only through its own timeouts, as with a cable pulled out.
	silent
	// reset drops every connection and closes new ones at once, as a
	// firewall rejecting the traffic would: both sides notice immediately.
	reset
)

func (m mode) String() string {
	switch m {
	case open:
		return "open"
	case silent:
		return "silent"
	case reset:
		return "reset"
	}
	return "unknown"
}

// conn is one accepted connection and, unless it was accepted while the link
// was cut, its connection to the target. A tainted conn has lost bytes: it
// forwards nothing and is closed when the link opens again, so both servers
// start over on fresh connections instead of reading a corrupted stream.
type conn struct {
	client, server net.Conn // server is nil for a connection held while cut
	tainted        bool
}

func (c *conn) close() {
	_ = c.client.Close()
	if c.server != nil {
		_ = c.server.Close()
	}
}

// link forwards the connections server `from` opens towards one port of
// server `to` (its quorum or its election port).
type link struct {
	name   string
	from   int
	to     int
	ln     net.Listener
	target string
	// advertise, when set, replaces the election address server `from`
	// announces in its first message (see rewriteInitial).
	advertise string

	mu    sync.Mutex
	mode  mode
	conns map[*conn]struct{}
	wg    sync.WaitGroup
	done  chan struct{} // closed by close
}

func newLink(name string, from, to int, listen, target, advertise string) (*link, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	l := &link{name: name, from: from, to: to, ln: ln, target: target, advertise: advertise,
		conns: make(map[*conn]struct{}), done: make(chan struct{})}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// set switches the link to m and applies it to the open connections.
func (l *link) set(m mode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m == l.mode {
		return
	}
	l.mode = m
	n := 0
	for c := range l.conns {
		switch {
		case m == reset, m == open && c.tainted:
			c.close()
			delete(l.conns, c)
			n++
		case m == silent:
			c.tainted = true
		}
	}
	log.Printf("%s: %s (%d connection(s) closed, %d kept)", l.name, m, n, len(l.conns))
}

// close stops the link and waits for its goroutines.
func (l *link) close() {
	close(l.done)
	_ = l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.close()
	}
	clear(l.conns)
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *link) acceptLoop() {
	defer l.wg.Done()
	for {
		client, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		} else if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		l.wg.Add(1)
		go l.serve(client)
	}
}

// serve handles one accepted connection for its whole life.
func (l *link) serve(client net.Conn) {
	defer l.wg.Done()
	l.mu.Lock()
	m := l.mode
	l.mu.Unlock()
	switch m {
	case reset:
		_ = client.Close()
		return
	case silent:
		c := &conn{client: client, tainted: true}
		if l.track(c) {
			l.pump(c, client, nil)
		}
		return
	}
	server, err := l.dialPatiently()
	if err != nil {
		_ = client.Close()
		return
	}
	c := &conn{client: client, server: server}
	if !l.track(c) {
		return
	}
	if l.advertise != "" {
		_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
		sid, was, err := rewriteInitial(client, server, l.advertise)
		_ = client.SetReadDeadline(time.Time{})
		if err != nil {
			log.Printf("%s: initial message: %v", l.name, err)
			l.drop(c)
			return
		}
		if sid >= 0 && was != l.advertise {
			log.Printf("%s: server %d advertised %s, rewritten to %s", l.name, sid, was, l.advertise)
		}
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.pump(c, server, client)
	}()
	l.pump(c, client, server)
}

// refusedFor is how long a link keeps dialing a target that refuses
// connections. Without the proxy, a server connecting to a peer that is
// not listening yet (a leader elected a moment ago opens its quorum port
// just after) is refused and retries; through the proxy its connection
// is accepted first, so a refusal would reach it as a reset of an
// established connection, which it treats as a lost leader and starts a
// new election. Retrying here for a little while spares it that.
const refusedFor = 2 * time.Second

func (l *link) dialPatiently() (net.Conn, error) {
	deadline := time.Now().Add(refusedFor)
	for {
		c, err := net.DialTimeout("tcp", l.target, 5*time.Second)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-l.done:
			return nil, err
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// track registers c, unless the link changed mode while c was being set
// up; then c is closed (reset) or held without a peer (silent).
func (l *link) track(c *conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.mode == reset:
		c.close()
		return false
	case l.mode == silent:
		c.tainted = true
	}
	l.conns[c] = struct{}{}
	return true
}

// pump copies src to dst until src ends, discarding what it reads while c
// is tainted. A nil dst discards everything. When src ends, c is closed;
// but while c is tainted only src is: across a partition, one side closing
// goes unnoticed by the other, which keeps its end until it gives up on
// its own or the link opens again.
func (l *link) pump(c *conn, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			l.mu.Lock()
			drop := c.tainted || dst == nil
			l.mu.Unlock()
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					err = werr
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Printf("%s: connection ended: %v", l.name, err)
			}
			break
		}
	}
	l.mu.Lock()
	hidden := c.tainted
	l.mu.Unlock()
	if hidden {
		_ = src.Close()
		return
	}
	l.drop(c)
}

// drop forgets c and closes it.
func (l *link) drop(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	c.close()
}
