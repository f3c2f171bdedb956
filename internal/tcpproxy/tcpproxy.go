// Package tcpproxy is a loopback TCP proxy for fault tests: put it between
// a client and a server, then Cut the link (every connection dropped, new
// ones closed at once) and Restore it, as a network partition would.
package tcpproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections accepted on 127.0.0.1 to a target address.
// Its methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	muted  bool // replies (server to client) are discarded
	closed bool
	conns  map[net.Conn]struct{} // both ends of every forwarded connection

	wg sync.WaitGroup // the accept loop and the copy goroutines
}

// New listens on 127.0.0.1:0 and forwards every accepted connection to
// target ("host:port").
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the address clients connect to, "127.0.0.1:<port>".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut drops every open connection and, until Restore, closes new ones as
// soon as they are accepted: clients see their connection reset and cannot
// reconnect.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.takeConns()
	p.mu.Unlock()
	closeAll(conns)
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// LoseReplies makes ZooKeeper (or any server) apply what it receives while
// its answers never arrive: for d, every byte from the server to its
// clients is discarded, then every open connection is dropped. Requests sent
// in that window are processed by the server and their replies lost, as in
// a leader election or a network failure right after a write. New
// connections are accepted again at once.
func (p *Proxy) LoseReplies(d time.Duration) {
	p.mu.Lock()
	p.muted = true
	p.mu.Unlock()
	time.Sleep(d)
	p.mu.Lock()
	p.muted = false
	conns := p.takeConns()
	p.mu.Unlock()
	closeAll(conns)
}

// Close stops listening, drops every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.takeConns()
	p.mu.Unlock()
	err := p.ln.Close()
	closeAll(conns)
	p.wg.Wait()
	return err
}

func (p *Proxy) takeConns() []net.Conn {
	out := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	clear(p.conns)
	return out
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		_ = c.Close()
	}
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		} else if err != nil {
			continue
		}
		p.mu.Lock()
		refuse := p.cut || p.closed
		p.mu.Unlock()
		if refuse {
			_ = client.Close()
			continue
		}
		p.wg.Add(1)
		go p.forward(client)
	}
}

// forward dials the target for one client and copies both ways until
// either side ends or the proxy drops them.
func (p *Proxy) forward(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.cut || p.closed { // cut while dialing
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	p.mu.Unlock()

	var once sync.Once
	done := func() {
		once.Do(func() {
			_ = client.Close()
			_ = server.Close()
			p.mu.Lock()
			delete(p.conns, client)
			delete(p.conns, server)
			p.mu.Unlock()
		})
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(server, client)
		done()
	}()
	p.copyReplies(client, server)
	done()
}

// copyReplies copies from server to client, discarding what arrives while
// the proxy is muted.
func (p *Proxy) copyReplies(client, server net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			muted := p.muted
			p.mu.Unlock()
			if !muted {
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
