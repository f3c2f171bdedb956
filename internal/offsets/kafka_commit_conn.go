package offsets

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// commitConn is the store's own connection to the group coordinator, over
// which its commits go one at a time (connSem), opened as the fetcher opens
// its own (KafkaConfig.OwnConns: the client's TLS, SASL, proxy and dial settings,
// a user's Dial included; metrics never unregistered), with a writeGate
// under TLS. Only the commits' own answers can throttle it (sarama
// throttles a Broker on the answers to requests sent over it, and only
// commits are), so the store knows when a throttle ends (awaitThrottle).
type commitConn struct {
	broker *sarama.Broker
	id     int32 // the coordinator's
	addr   string
	dialer Dialer
	gate   *writeGate

	// Used only with connSem held.
	throttledUntil time.Time // a commit's answer asked for no request before
	lastUsed       time.Time
}

// commitConnIdle is how long the commit connection may stay unused before
// it is opened again rather than used: brokers close connections idle for
// connections.max.idle.ms (10 minutes by default), and a commit sent over
// one they closed fails.
const commitConnIdle = 5 * time.Minute

// acquireConn takes connSem, waiting until deadline (none when zero: an
// error wrapping errKafkaCommitDeadline then) and until closing is closed
// (ErrGroupClosing).
func (s *KafkaOffsets) acquireConn(deadline time.Time) error {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	expired, stop := deadlineTimer(deadline)
	defer stop()
	select {
	case s.connSem <- struct{}{}:
		return nil
	case <-expired:
		return fmt.Errorf("the coordinator's connection was busy with other commits until the commit's deadline: %w", errKafkaCommitDeadline)
	case <-s.closing:
		return ErrGroupClosing
	}
}

// releaseConn releases connSem, closing the commit connection first when
// the group is closing (stopping or closing) or the store is, and no
// other commit waits for it.
func (s *KafkaOffsets) releaseConn() {
	if s.conn != nil && s.waiting.Load() == 0 && (isClosed(s.stopping) || isClosed(s.closing) || s.closed.Load()) {
		s.dropConn(s.conn)
	}
	<-s.connSem
}

// connTo returns the commit connection, open to coordinator, ready for a
// request: the one open, or a new one (the coordinator moved, the one open
// broke or stayed unused commitConnIdle), waiting for it to connect and
// authenticate until deadline and until closing is closed. connSem is held.
func (s *KafkaOffsets) connTo(coordinator *sarama.Broker, deadline time.Time) (*commitConn, error) {
	if c := s.conn; c != nil {
		if c.id == coordinator.ID() && c.addr == coordinator.Addr() && time.Since(c.lastUsed) < commitConnIdle {
			if ok, _ := c.broker.Connected(); ok { // no request in flight: does not block
				c.lastUsed = time.Now()
				return c, nil
			}
		}
		s.dropConn(c)
	}
	conf := s.client.Config()
	own, d := s.ownConns(conf)
	gate := &writeGate{closing: s.closing}
	own.Net.Proxy.Dialer = gatedDialer{d, gate}
	b := sarama.NewBroker(coordinator.Addr())
	if err := b.Open(own); err != nil {
		d.CloseAll()
		return nil, fmt.Errorf("open a connection to the group's coordinator %s: %w", coordinator.Addr(), err)
	}
	c := &commitConn{broker: b, id: coordinator.ID(), addr: coordinator.Addr(), dialer: d, gate: gate, lastUsed: time.Now()}
	ready := make(chan error, 1)
	go func() {
		ok, err := b.Connected() // waits for Open's dial, ApiVersions and SASL
		if err == nil && !ok {
			err = sarama.ErrNotConnected
		}
		if err == nil && own.Net.TLS.Enable && !own.ApiVersionsRequest && !own.Net.SASL.Enable {
			// Nothing was exchanged: make the TLS handshake now, not
			// between a claim check and its request.
			_, err = b.ApiVersions(&sarama.ApiVersionsRequest{})
		}
		ready <- err
	}()
	expired, stop := deadlineTimer(deadline)
	defer stop()
	var err error
	select {
	case err = <-ready:
		if err == nil {
			s.setConn(c)
			return c, nil
		}
		err = fmt.Errorf("connect to the group's coordinator %s: %w", coordinator.Addr(), err)
	case <-expired:
		err = fmt.Errorf("connecting to the group's coordinator outlasted the commit's deadline: %w", errKafkaCommitDeadline)
	case <-s.closing:
		err = ErrGroupClosing
	}
	c.shut()
	go func() { // ends at once: its dials are cancelled, its socket shut
		<-ready
		_ = b.Close()
	}()
	return nil, err
}

// setConn makes c the commit connection. The first one starts the watch
// of stopping (closeAtStop).
func (s *KafkaOffsets) setConn(c *commitConn) {
	s.connMu.Lock()
	s.conn = c
	s.connMu.Unlock()
	if s.stopping != nil {
		s.watchStop.Do(func() { go s.closeAtStop() })
	}
}

// closeAtStop closes the commit connection once the group's Close began
// (stopping), as soon as no commit holds it: a commit after that opens
// another, closed when it ends (releaseConn). It runs from the first
// connection on, so only a group that joined, and is closed, starts it.
func (s *KafkaOffsets) closeAtStop() {
	<-s.stopping
	s.connSem <- struct{}{} // the commit holding it ends within Net.ReadTimeout, at once after Closing
	s.releaseConn()
}

// dropConn closes c, the commit connection, and forgets it. connSem is
// held, so no request is in flight on it.
func (s *KafkaOffsets) dropConn(c *commitConn) {
	s.connMu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.connMu.Unlock()
	c.shut()
	_ = c.broker.Close()
}

// settle records what a commit's round trip over c tells of c: a throttle
// the coordinator asked for, or a failure other than Kafka's answer (a
// broken connection, a write the gate refused), after which c is closed
// and the next commit opens another. connSem is held.
func (s *KafkaOffsets) settle(c *commitConn, resp *sarama.OffsetCommitResponse, err error) {
	var kerr sarama.KError
	if err != nil && !errors.As(err, &kerr) {
		s.dropConn(c)
		return
	}
	if resp != nil && resp.ThrottleTimeMs > 0 {
		c.throttledUntil = time.Now().Add(time.Duration(resp.ThrottleTimeMs) * time.Millisecond)
	}
}

// awaitThrottle waits until the throttle a commit's answer asked for has
// passed, so that sarama does not wait for it after the claim check: not
// past deadline (an error wrapping errKafkaCommitDeadline at once, when it
// ends later), nor once closing is closed (ErrGroupClosing). connSem is
// held.
func (c *commitConn) awaitThrottle(deadline time.Time, closing <-chan struct{}) error {
	wait := time.Until(c.throttledUntil)
	switch {
	case wait <= 0:
		return nil
	case !deadline.IsZero() && !c.throttledUntil.Before(deadline):
		return fmt.Errorf("the coordinator throttles commits for %v, past the commit's deadline: %w", wait.Round(time.Millisecond), errKafkaCommitDeadline)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-closing:
		return ErrGroupClosing
	}
}

// shut shuts c's socket (and cancels its dial): nothing is written on it
// any more, and a request in flight fails at once.
func (c *commitConn) shut() {
	c.gate.shut()
	c.dialer.CloseAll()
}

// Close shuts the commit connection, waits for the commit in flight on it
// to end, and closes it; later commits fail with ErrGroupClosing. The
// group closes it when its Close began (stopping), once no commit uses it;
// a store made without stopping (tests) is closed with Close.
func (s *KafkaOffsets) Close() {
	s.closed.Store(true)
	s.connMu.Lock()
	c := s.conn
	s.connMu.Unlock()
	if c != nil {
		c.shut()
	}
	s.connSem <- struct{}{}
	if s.conn != nil {
		s.dropConn(s.conn)
	}
	<-s.connSem
}
