package fetch

import (
	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/brokerconn"
)

// A fetcher with ownConns sends its rounds over connections of its own, one
// per broker: Kafka answers a connection's requests in order, so a long
// poll would hold up everything behind it. It dials them itself
// (brokerconn.Dialer) so that closeConns can shut them under a request in
// flight. See docs/batch-feed.md, "Two fetchers, connections of their own".

// connTo returns the connection to leader the fetcher's rounds use: the
// client's, or, with ownConns, one of the fetcher's own, opened on first
// use (nil once closeConns was called). f.mu is held.
func (f *roundFetcher) connTo(leader *sarama.Broker) *sarama.Broker {
	if !f.ownConns {
		return leader
	}
	if f.closed {
		return nil // opened now, nobody would close it
	}
	if f.conns == nil {
		f.conns = make(map[int32]*sarama.Broker)
		f.dialer = brokerconn.NewDialer(f.env.config.Config)
	}
	b, ok := f.conns[leader.ID()]
	if !ok || b.Addr() != leader.Addr() {
		if ok { // the leader moved; its old connection is idle (rounds go one at a time)
			old := b
			go func() { _ = old.Close() }()
		}
		b = ownBroker(leader)
		_ = b.Open(brokerconn.Config(f.env.config.Config, f.dialer)) // a failed dial fails the round's Fetch
		f.conns[leader.ID()] = b
	}
	return b
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
// is not (or no longer) the fetcher's own is left alone: the client's, or
// one already replaced or closed.
func (f *roundFetcher) dropConn(id int32, conn *sarama.Broker) {
	f.mu.Lock()
	if f.conns[id] != conn {
		f.mu.Unlock()
		return
	}
	delete(f.conns, id)
	f.mu.Unlock()
	_ = conn.Close() // its round failed: nothing in flight to wait for
}

// closeConns closes the fetcher's own connections and waits until its
// rounds are over. The sockets are shut first, so a round in flight fails
// at once instead of waiting for a long poll's answer; rounds after it
// fail (errFetcherClosed) instead of opening new connections.
// Engine.Close calls it once every feed has stopped.
func (f *roundFetcher) closeConns() {
	if !f.ownConns {
		return
	}
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = nil
	d := f.dialer
	f.mu.Unlock()
	if d != nil {
		d.CloseAll()
	}
	for _, b := range conns {
		_ = b.Close()
	}
	f.rounds.Wait()
}
