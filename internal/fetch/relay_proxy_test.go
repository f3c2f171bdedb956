package fetch

import (
	"io"
	"net"
	"sync"
	"time"
)

// relayProxy is a user's Net.Proxy.Dialer that relays every connection to
// the broker through the test, so a test can slow the broker's answers
// down (bytesPerSecond; 0: as fast as they come), as over a WAN link, or
// cut one connection (reap), as a Kafka broker closes a connection idle
// longer than connections.max.idle.ms (10 minutes by default), or hold
// every answer back until gate is closed (gate not nil).
type relayProxy struct {
	bytesPerSecond int
	gate           chan struct{}

	mu     sync.Mutex
	relays []relay // in dial order
	wg     sync.WaitGroup
}

// relay is one relayed connection: our end toward sarama, and the
// connection to the broker.
type relay struct{ ours, server net.Conn }

func (p *relayProxy) Dial(network, addr string) (net.Conn, error) {
	server, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	ours, theirs := net.Pipe()
	p.mu.Lock()
	p.relays = append(p.relays, relay{ours: ours, server: server})
	p.mu.Unlock()
	p.wg.Add(2)
	go func() { defer p.wg.Done(); _, _ = io.Copy(server, ours); server.Close() }()
	go func() {
		defer p.wg.Done()
		defer ours.Close()
		p.answer(ours, server)
	}()
	return theirs, nil
}

// answer copies the broker's answers from server to ours, at
// bytesPerSecond when set, once gate is closed when set.
func (p *relayProxy) answer(ours, server net.Conn) {
	if p.gate != nil {
		<-p.gate
	}
	if p.bytesPerSecond == 0 {
		_, _ = io.Copy(ours, server)
		return
	}
	chunk := make([]byte, p.bytesPerSecond/20)
	for {
		n, err := server.Read(chunk)
		if n > 0 {
			time.Sleep(50 * time.Millisecond)
			if _, werr := ours.Write(chunk[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// reap closes the connection dialed n-th (from 0), on both sides.
func (p *relayProxy) reap(n int) {
	p.mu.Lock()
	r := p.relays[n]
	p.mu.Unlock()
	r.ours.Close()
	r.server.Close()
}

// dialed returns how many connections were dialed.
func (p *relayProxy) dialed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.relays)
}

// closeAll closes every connection and waits for the relays to end.
func (p *relayProxy) closeAll() {
	p.mu.Lock()
	for _, r := range p.relays {
		r.ours.Close()
		r.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
