package fetch

import (
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/brokerconn"
)

// A fetcher with ownConns (the busy one) sends its rounds over a
// connection of its own per broker, apart from the client's, where the
// idle fetcher's long polls wait: Kafka answers a connection's requests in
// order. It dials it itself (brokerconn.Dialer) so that closeConns can
// shut it under a request in flight, and closes it once no round used it
// for ownConnIdleClose. See docs/batch-feed.md, "Connections".

// ownConnIdleClose is how long an own connection stays open after its last
// round: long enough that a partition's bursts a few seconds apart reuse
// it (a new one costs a TLS and SASL handshake), short enough that a group
// whose partitions all went idle keeps only the client's connections.
const ownConnIdleClose = time.Minute

// ownConn is one of the fetcher's own connections, to one broker.
type ownConn struct {
	broker *sarama.Broker
	// inUse is set while a round goes over it (the broker's rounds go one
	// at a time); idleSince counts the times it was released, so a timer
	// armed before the last release closes nothing.
	inUse     bool
	idleSince uint64
	idle      *time.Timer // closes it ownConnIdleClose after its last round
}

// connTo returns the connection to leader the fetcher's next round to it
// uses: the client's, or, with ownConns, the fetcher's own, opened on
// first use and marked in use until releaseConn (nil once closeConns was
// called). f.mu is held.
func (f *roundFetcher) connTo(leader *sarama.Broker) *sarama.Broker {
	if f.closed {
		return nil // closeConns waits for no new round, and would close nothing opened now
	}
	if !f.ownConns {
		return leader
	}
	if f.conns == nil {
		f.conns = make(map[int32]*ownConn)
		f.dialer = brokerconn.NewDialer(f.env.config.Config)
	}
	c, ok := f.conns[leader.ID()]
	if !ok || c.broker.Addr() != leader.Addr() {
		if ok { // the leader moved; its old connection is idle (rounds go one at a time)
			f.forget(leader.ID(), c)
			go func() { _ = c.broker.Close() }()
		}
		c = &ownConn{broker: ownBroker(leader)}
		_ = c.broker.Open(brokerconn.Config(f.env.config.Config, f.dialer)) // a failed dial fails the round's Fetch
		f.conns[leader.ID()] = c
	}
	c.inUse = true
	if c.idle != nil {
		c.idle.Stop()
	}
	return c.broker
}

// releaseConn says the round to broker id over conn is over: conn, if it
// is still the fetcher's own connection to id, is closed after
// f.idleClose unless a round uses it again first.
func (f *roundFetcher) releaseConn(id int32, conn *sarama.Broker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[id]
	if !ok || c.broker != conn {
		return
	}
	c.inUse = false
	c.idleSince++
	since := c.idleSince
	c.idle = time.AfterFunc(f.idleClose, func() { f.closeIdleConn(id, c, since) })
}

// closeIdleConn closes c, the fetcher's own connection to broker id, if no
// round used it since its release number since.
func (f *roundFetcher) closeIdleConn(id int32, c *ownConn, since uint64) {
	f.mu.Lock()
	if f.conns[id] != c || c.inUse || c.idleSince != since {
		f.mu.Unlock()
		return
	}
	delete(f.conns, id)
	f.mu.Unlock()
	_ = c.broker.Close() // nothing in flight: no round uses it
}

// forget removes c, the fetcher's own connection to broker id, from
// f.conns and stops its idle timer. f.mu is held.
func (f *roundFetcher) forget(id int32, c *ownConn) {
	delete(f.conns, id)
	if c.idle != nil {
		c.idle.Stop()
	}
}

// ownBroker returns an unopened connection to leader that carries its id:
// sarama registers a connection's per-broker metrics
// (incoming-byte-rate-for-broker-<id>, ...) only for a Broker with an id,
// and sarama.NewBroker gives none. A metadata response's brokers are the
// one way sarama's API builds one with an id.
func ownBroker(leader *sarama.Broker) *sarama.Broker {
	var md sarama.MetadataResponse
	md.AddBroker(leader.Addr(), leader.ID())
	return md.Brokers[0]
}

// dropConn forgets conn, the fetcher's own connection to broker id, after
// a round over it failed, and closes it: a sarama Broker whose connection
// broke fails every later request, so keeping it would fail every later
// round to that broker. The next round opens a new one. A connection that
// is not (or no longer) the fetcher's own is left alone: the client's
// (sarama opens it again), or one already replaced or closed.
func (f *roundFetcher) dropConn(id int32, conn *sarama.Broker) {
	f.mu.Lock()
	c, ok := f.conns[id]
	if !ok || c.broker != conn {
		f.mu.Unlock()
		return
	}
	f.forget(id, c)
	f.mu.Unlock()
	_ = conn.Close() // its round failed: nothing in flight to wait for
}

// closeConns makes the fetcher send no more rounds, closes its own
// connections and waits until its rounds are over. The own sockets are
// shut first, so a round in flight over them fails at once instead of
// waiting for its answer; a long poll over the client's connection (the
// idle fetcher's) is waited for, up to Consumer.MaxWaitTime. Rounds after
// it fail (errFetcherClosed). Engine.Close calls it once every feed has
// stopped.
func (f *roundFetcher) closeConns() {
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = nil
	for id, c := range conns {
		f.forget(id, c)
	}
	d := f.dialer
	f.mu.Unlock()
	if d != nil {
		d.CloseAll()
	}
	for _, c := range conns {
		_ = c.broker.Close()
	}
	f.rounds.Wait()
}
