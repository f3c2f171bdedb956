package fetch

import (
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/brokerconn"
)

// The fetchers share one connection of their own per broker, apart from
// the client's: the idle fetcher's long polls go over it, and so do the
// busy fetcher's rounds unless a long poll is in flight there (Kafka
// answers a connection's requests in order), when they go over the
// client's. It is dialed by a brokerconn.Dialer, so that closeAll can shut
// it under a request in flight, and closed once no round used it for
// idleClose. See docs/batch-feed.md, "Connections".

// ownConnIdleClose is how long an own connection stays open after its last
// round: long enough that a partition whose bursts come seconds apart
// reuses it (a new one costs a TLS and SASL handshake), short enough that
// one whose partitions moved away (a leader move, a rebalance) goes soon.
const ownConnIdleClose = time.Minute

// ownConns are the group's own connections, one per broker, shared by its
// fetchers.
type ownConns struct {
	env *env
	// idleClose is how long a connection stays open after its last round
	// (ownConnIdleClose; shorter in tests).
	idleClose time.Duration

	mu     sync.Mutex
	conns  map[int32]*ownConn     // by broker id
	dialer *brokerconn.Dialer     // dials conns
	closed bool                   // closeAll was called: no new connections
	firsts map[int32]*outstanding // first fetches out, by broker (first_fetch_priority.go)
	// expected counts the partitions expected to open (ExpectOpen).
	expected *outstanding
}

// ownConn is the own connection to one broker.
type ownConn struct {
	broker *sarama.Broker
	// fetch sends the rounds' Fetch requests over broker's socket (see
	// own_conn_fetch.go).
	fetch *ownFetchConn
	// rounds are the rounds in flight over it, longPolls those of them
	// that wait on the broker.
	rounds, longPolls int
	// released counts the times its last round ended, so an idle timer
	// armed before the latest one closes nothing.
	released uint64
	idle     *time.Timer // closes it idleClose after its last round
}

func newOwnConns(e *env) *ownConns {
	return &ownConns{env: e, idleClose: ownConnIdleClose, conns: make(map[int32]*ownConn)}
}

// acquire returns the connection a round to leader goes over, and whether
// it is the own one (opened on first use): a long poll always goes over
// it, a round answered at once too unless a long poll is in flight there,
// when it goes over the client's, leader itself; mustOwn takes the own one
// all the same (the round then waits behind the long poll). Nil once closeAll was
// called. Each own connection acquire returns is released after its round.
func (o *ownConns) acquire(leader *sarama.Broker, longPoll, mustOwn bool) (conn *sarama.Broker, own bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, false // closeAll would close nothing opened now
	}
	id := leader.ID()
	c, ok := o.conns[id]
	if ok && c.broker.Addr() != leader.Addr() { // the broker moved; its old connection goes
		o.forget(id, c)
		go c.close() // waits for a long poll on it, if one is in flight
		ok = false
	}
	if ok && !longPoll && !mustOwn && c.longPolls > 0 {
		return leader, false
	}
	if !ok {
		if o.dialer == nil {
			o.dialer = brokerconn.NewDialer(o.env.config.Config)
		}
		c = &ownConn{broker: ownBroker(leader)}
		conf, capture := capturingConfig(brokerconn.Config(o.env.config.Config, o.dialer), o.dialer)
		c.fetch = &ownFetchConn{broker: c.broker, capture: capture, conf: conf}
		_ = c.broker.Open(conf) // a failed dial fails the round's Fetch
		o.conns[id] = c
	}
	c.rounds++
	if longPoll {
		c.longPolls++
	}
	if c.idle != nil {
		c.idle.Stop()
	}
	return c.broker, true
}

// release says a round over conn, the own connection to broker id, is
// over: once no round uses it, it is closed after idleClose unless a round
// uses it again first. A connection no longer the own one (dropped,
// replaced) is left alone.
func (o *ownConns) release(id int32, conn *sarama.Broker, longPoll bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.conns[id]
	if !ok || c.broker != conn {
		return
	}
	c.rounds--
	if longPoll {
		c.longPolls--
	}
	if c.rounds > 0 {
		return
	}
	c.released++
	released := c.released
	c.idle = time.AfterFunc(o.idleClose, func() { o.closeIdle(id, c, released) })
}

// closeIdle closes c, the own connection to broker id, unless a round used
// it since its release number released.
func (o *ownConns) closeIdle(id int32, c *ownConn, released uint64) {
	o.mu.Lock()
	if o.conns[id] != c || c.rounds > 0 || c.released != released {
		o.mu.Unlock()
		return
	}
	delete(o.conns, id)
	o.mu.Unlock()
	c.close() // nothing in flight: no round uses it
}

// drop forgets conn, the own connection to broker id, after a round over
// it failed, and closes it: a sarama Broker whose connection broke fails
// every later request, so keeping it would fail every later round to that
// broker. The next round opens a new one. A connection that is not (or no
// longer) the own one is left alone: the client's (sarama opens it again),
// or one already replaced or closed.
func (o *ownConns) drop(id int32, conn *sarama.Broker) {
	o.mu.Lock()
	c, ok := o.conns[id]
	if !ok || c.broker != conn {
		o.mu.Unlock()
		return
	}
	o.forget(id, c)
	o.mu.Unlock()
	// The other fetcher's round may still be in flight over it, which
	// close waits for: that round fails at once if the connection broke,
	// and closeAll shuts the socket under it.
	go c.close()
}

// close closes c once the round in flight over it, if any, is over.
func (c *ownConn) close() {
	c.fetch.mu.Lock()
	defer c.fetch.mu.Unlock()
	_ = c.broker.Close()
}

// fetchConn returns the own connection whose Broker is conn, or nil.
func (o *ownConns) fetchConn(conn *sarama.Broker) *ownFetchConn {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.conns {
		if c.broker == conn {
			return c.fetch
		}
	}
	return nil
}

// forget removes c, the own connection to broker id, and stops its idle
// timer. o.mu is held.
func (o *ownConns) forget(id int32, c *ownConn) {
	delete(o.conns, id)
	if c.idle != nil {
		c.idle.Stop()
	}
}

// closeAll closes the own connections and opens no more. The sockets are
// shut first, so a round in flight over them fails at once instead of
// waiting for its answer (a long poll's, or a hung broker's).
func (o *ownConns) closeAll() {
	o.mu.Lock()
	o.closed = true
	conns := o.conns
	o.conns = make(map[int32]*ownConn)
	for id, c := range conns {
		o.forget(id, c)
	}
	d := o.dialer
	o.mu.Unlock()
	if d != nil {
		d.CloseAll()
	}
	for _, c := range conns {
		c.close()
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

// connTo returns the connection the fetcher's next round to leader goes
// over, and whether it is an own one (see ownConns.acquire; without own
// connections, the client's). Nil once closeConns was called. f.mu is
// held.
func (f *roundFetcher) connTo(leader *sarama.Broker, mustOwn bool) (conn *sarama.Broker, own bool) {
	if f.closed {
		return nil, false
	}
	if f.own == nil {
		return leader, false
	}
	return f.own.acquire(leader, f.longPoll, mustOwn)
}

// releaseConn says the fetcher's round to broker id over conn is over.
func (f *roundFetcher) releaseConn(id int32, conn *sarama.Broker, own bool) {
	if own {
		f.own.release(id, conn, f.longPoll)
	}
}

// dropConn closes conn, an own connection to broker id, after a round over
// it failed (see ownConns.drop).
func (f *roundFetcher) dropConn(id int32, conn *sarama.Broker, own bool) {
	if own {
		f.own.drop(id, conn)
	}
}

// closeConns makes the fetcher send no more rounds, closes the own
// connections (shared with the other fetcher, which is closing too) and
// waits until its rounds are over: those over own connections fail at
// once; those over the client's are abandoned (see sendOver). Rounds
// after it fail (errFetcherClosed). Engine.Close calls it once every feed
// has stopped.
func (f *roundFetcher) closeConns() {
	f.mu.Lock()
	if !f.closed {
		close(f.closing)
	}
	f.closed = true
	f.mu.Unlock()
	if f.own != nil {
		f.own.closeAll()
	}
	f.rounds.Wait()
}
