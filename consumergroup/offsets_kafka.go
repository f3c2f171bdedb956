package consumergroup

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// kafkaOffsetStore stores the group's offsets as Kafka group offsets,
// through the group coordinator: OffsetFetch to read, and standalone
// OffsetCommit requests (generation -1, no member ID) to write, as any
// client that commits for a group without joining it does. The broker
// accepts such commits while the group has no broker-coordinated members,
// which is the case of a group coordinated through ZooKeeper; it refuses
// them (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION) while a
// sarama.ConsumerGroup or a Java consumer with the same group ID is running.
//
// A commit is one OffsetCommit request, sent to the coordinator here rather
// than through sarama's ClusterAdmin, which retries a moved coordinator by
// itself (Admin.Retry.Max times, up to Net.ReadTimeout each) with nobody
// checking the claim in between: the offset manager makes every attempt,
// and each attempt checks the claim right before its request goes out,
// after the coordinator is known (see commitFenced). sarama's
// OffsetManager is not used either: it commits on its own timer and reports
// failures asynchronously, while every commit here is a decision of the
// offset manager with an exact outcome. Reads, and the reset (made while no
// other member runs), go through the admin and its retries: they move no
// offset behind an owner's back.
//
// Commits go over a connection of the store's own to the coordinator
// (commitConn), one at a time, never over the client's: sarama's Broker
// holds its lock for a whole round trip, so a request sent over the
// client's connection waits, after the claim check, for every request in
// flight there (the read of what Kafka holds, the admin's, other
// partitions' commits) and for a throttle sarama keeps. On the store's own
// connection the commit that holds it (connSem) is the only request.
//
// None of these calls takes a context. Once closing is closed (Close
// stopped waiting for the partitions: ConsumerGroup.closeExpired) every
// wait of a commit, of a coordinator lookup and of a read of what Kafka
// holds ends at once with errGroupClosing, the call itself going on in its
// goroutine; fetch is bounded the same way by its caller (readStored). The
// commit connection's socket is shut then, and nothing is written on it
// any more.
type kafkaOffsetStore struct {
	client  sarama.Client
	admin   sarama.ClusterAdmin // shares client; never closed (that would close the client)
	group   string
	closing <-chan struct{} // closed: stop waiting for Kafka (errGroupClosing); nil: never
	check   heldOffsets     // what Kafka holds for the owned partitions, read once a commit round

	lookupMu sync.Mutex
	lookup   *coordinatorLookup // the coordinator lookup in flight; nil: none

	// stopping, when closed (the group's Close began), has the commit
	// connection closed whenever no commit holds it or waits for it, so
	// nothing of it outlives Close; nil: never.
	stopping <-chan struct{}
	// connSem is held (a value in it) by the commit that uses conn, from
	// before its claim check until its answer came or its connection was
	// shut: sarama's Broker writes a request only once the answer to the
	// one before has come, so nothing else may be in flight on conn when a
	// commit's claim check passes.
	connSem chan struct{}
	waiting atomic.Int32 // commits waiting for connSem
	connMu  sync.Mutex   // guards conn's pointer; set only with connSem held
	conn    *commitConn  // the commit connection; nil: none open
	closed  atomic.Bool  // close was called: no commit any more

	watchStop sync.Once // closeAtStop started
}

// newKafkaOffsetStore returns the Kafka store of group's offsets over
// client, which stops waiting for Kafka once closing is closed.
func newKafkaOffsetStore(client sarama.Client, group string, closing <-chan struct{}) (*kafkaOffsetStore, error) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("Kafka offset storage: %w", err)
	}
	return &kafkaOffsetStore{client: client, admin: admin, group: group, closing: closing, check: heldOffsets{closing: closing},
		connSem: make(chan struct{}, 1)}, nil
}

// fetch implements groupOffsetStore.
func (s *kafkaOffsetStore) fetch(topic string, partition int32) (int64, error) {
	resp, err := s.admin.ListConsumerGroupOffsets(s.group, map[string][]int32{topic: {partition}})
	if err != nil {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: %w", s.group, topic, partition, err)
	}
	block := resp.GetBlock(topic, partition)
	if block == nil {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: the coordinator's answer omits the partition", s.group, topic, partition)
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return -1, fmt.Errorf("fetch the offset of group %s for %s/%d: %w", s.group, topic, partition, block.Err)
	}
	return max(block.Offset, -1), nil
}

// commit implements groupOffsetStore: commitFenced without a deadline or a
// check.
func (s *kafkaOffsetStore) commit(topic string, partition int32, next int64) error {
	return s.commitFenced(topic, partition, next, time.Time{}, nil)
}

// commitFenced implements fencedCommitter: one OffsetCommit request, never
// retried here. The coordinator is looked up first when sarama has none
// cached (see coordinator); then the commit takes the store's commit
// connection (waiting for the commit that holds it), opens it to the
// coordinator if needed, and waits out a throttle the coordinator asked
// for; then ready (when not nil) is called, and the request is written
// right after it allowed it, provided deadline (none when zero) has not
// passed and closing is open, both checked again as the request is written
// to the socket. An answer saying the coordinator moved, or a broken
// connection, starts a new lookup of the coordinator, which the next
// attempt waits for. A commit whose request was written and whose answer
// Close stopped waiting for returns an error wrapping errKafkaCommitInDoubt.
func (s *kafkaOffsetStore) commitFenced(topic string, partition int32, next int64, deadline time.Time, ready func() error) error {
	err := s.commitOnce(topic, partition, next, deadline, ready)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errKafkaCommitInDoubt):
		return fmt.Errorf("offset %d of group %s for %s/%d: %w", next, s.group, topic, partition, err)
	}
	return fmt.Errorf("commit offset %d of group %s for %s/%d to Kafka: %w", next, s.group, topic, partition, err)
}

// errKafkaCommitInDoubt: Close stopped waiting for a commit to Kafka whose
// request had been written. The coordinator may still store it.
var errKafkaCommitInDoubt = fmt.Errorf("its OffsetCommit request was sent to Kafka and Close stopped waiting for the answer: "+
	"the offset may or may not have been stored (%w)", errGroupClosing)

// commitOnce sends the OffsetCommit request of commitFenced, built as
// sarama's admin builds it for the configured Version. An error of ready
// is returned as it is.
func (s *kafkaOffsetStore) commitOnce(topic string, partition int32, next int64, deadline time.Time, ready func() error) error {
	if s.closed.Load() {
		return errGroupClosing
	}
	coordinator, err := s.coordinator(deadline)
	if err != nil {
		return err
	}
	if err := s.acquireConn(deadline); err != nil {
		return err
	}
	held := true // connSem, until the request's goroutine takes it over
	defer func() {
		if held {
			s.releaseConn()
		}
	}()
	conn, err := s.connTo(coordinator, deadline)
	if err != nil {
		return err
	}
	if err := conn.awaitThrottle(deadline, s.closing); err != nil {
		return err
	}
	req := sarama.NewOffsetCommitRequest(s.client.Config(), s.group)
	var timestamp int64
	if req.Version == 1 {
		timestamp = sarama.ReceiveTime
	}
	req.AddBlockWithLeaderEpoch(topic, partition, next, -1, timestamp, "")
	// Nothing blocks from these checks to the request's write: no other
	// request is in flight on conn (connSem), no throttle is pending on it,
	// and its TLS handshake and SASL authentication are made (connTo). The
	// socket checks closing and the deadline again (writeGate).
	switch {
	case isClosed(s.closing):
		return errGroupClosing
	case !deadline.IsZero() && !time.Now().Before(deadline):
		return fmt.Errorf("the coordinator's connection is ready only after the commit's deadline: %w", errKafkaCommitDeadline)
	}
	if ready != nil {
		if err := ready(); err != nil {
			return err
		}
	}
	type result struct {
		resp *sarama.OffsetCommitResponse
		err  error
	}
	done := make(chan result, 1)
	write := conn.gate.arm(deadline)
	held = false
	go func() {
		resp, err := conn.broker.CommitOffset(req)
		conn.gate.disarm()
		s.settle(conn, resp, err)
		s.releaseConn()
		done <- result{resp, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-s.closing:
		select {
		case r = <-done: // it ended as Close stopped waiting: its outcome is known
		default:
			// Nothing is written on conn from here on: a request not
			// written yet never is; the commit's goroutine fails at once,
			// and ends.
			conn.shut()
			if conn.gate.wrote(write) {
				return errKafkaCommitInDoubt
			}
			return errGroupClosing
		}
	}
	if r.err != nil {
		s.refreshIfMoved(r.err)
		return r.err
	}
	kerr, ok := r.resp.Errors[topic][partition]
	switch {
	case !ok:
		return errors.New("the coordinator's answer omits the partition")
	case !errors.Is(kerr, sarama.ErrNoError):
		s.refreshIfMoved(kerr)
		return kerr
	}
	return nil
}

// commitConn is the store's own connection to the group coordinator, over
// which its commits go one at a time (connSem), opened as the fetcher opens
// its own (ownConnConfig: the client's TLS, SASL, proxy and dial settings,
// a user's Dial included; metrics never unregistered), with a writeGate
// under TLS. Only the commits' own answers can throttle it (sarama
// throttles a Broker on the answers to requests sent over it, and only
// commits are), so the store knows when a throttle ends (awaitThrottle).
type commitConn struct {
	broker *sarama.Broker
	id     int32 // the coordinator's
	addr   string
	dialer *connDialer
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
// (errGroupClosing).
func (s *kafkaOffsetStore) acquireConn(deadline time.Time) error {
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
		return errGroupClosing
	}
}

// releaseConn releases connSem, closing the commit connection first when
// the group is closing (stopping or closing) or the store is, and no
// other commit waits for it.
func (s *kafkaOffsetStore) releaseConn() {
	if s.conn != nil && s.waiting.Load() == 0 && (isClosed(s.stopping) || isClosed(s.closing) || s.closed.Load()) {
		s.dropConn(s.conn)
	}
	<-s.connSem
}

// connTo returns the commit connection, open to coordinator, ready for a
// request: the one open, or a new one (the coordinator moved, the one open
// broke or stayed unused commitConnIdle), waiting for it to connect and
// authenticate until deadline and until closing is closed. connSem is held.
func (s *kafkaOffsetStore) connTo(coordinator *sarama.Broker, deadline time.Time) (*commitConn, error) {
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
	d := newConnDialer(conf)
	gate := &writeGate{closing: s.closing}
	own := ownConnConfig(conf, d)
	own.Net.Proxy.Dialer = gatedDialer{d, gate}
	b := sarama.NewBroker(coordinator.Addr())
	if err := b.Open(own); err != nil {
		d.closeAll()
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
		err = errGroupClosing
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
func (s *kafkaOffsetStore) setConn(c *commitConn) {
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
func (s *kafkaOffsetStore) closeAtStop() {
	<-s.stopping
	s.connSem <- struct{}{} // the commit holding it ends within Net.ReadTimeout, at once after closeExpired
	s.releaseConn()
}

// dropConn closes c, the commit connection, and forgets it. connSem is
// held, so no request is in flight on it.
func (s *kafkaOffsetStore) dropConn(c *commitConn) {
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
func (s *kafkaOffsetStore) settle(c *commitConn, resp *sarama.OffsetCommitResponse, err error) {
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
// ends later), nor once closing is closed (errGroupClosing). connSem is
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
		return errGroupClosing
	}
}

// shut shuts c's socket (and cancels its dial): nothing is written on it
// any more, and a request in flight fails at once.
func (c *commitConn) shut() {
	c.gate.shut()
	c.dialer.closeAll()
}

// close shuts the commit connection, waits for the commit in flight on it
// to end, and closes it; later commits fail with errGroupClosing. The
// group closes it when its Close began (stopping), once no commit uses it;
// a store made without stopping (tests) is closed with close.
func (s *kafkaOffsetStore) close() {
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
		return errGroupClosing
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
	d    *connDialer
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

// coordinatorLookup is a lookup of the group's coordinator, shared by
// every caller that needs it while it runs.
type coordinatorLookup struct {
	done       chan struct{} // closed when the lookup ended, broker and err then set
	refreshing bool          // the round under way asks Kafka, cache or not
	again      bool          // a refresh was asked for during a round that reads the cache
	broker     *sarama.Broker
	err        error
}

// coordinator returns the group's coordinator: the one sarama has cached,
// or one it looks up (client.Coordinator: FindCoordinator with
// Metadata.Retry.Max retries, 2 s apart while the coordinator is loading,
// up to Net.ReadTimeout each). It waits for the lookup until deadline (none
// when zero), returning an error wrapping errKafkaCommitDeadline then, and
// until closing is closed (errGroupClosing); the lookup goes on, and its
// result stays cached for the next attempt. One lookup runs at a time.
func (s *kafkaOffsetStore) coordinator(deadline time.Time) (*sarama.Broker, error) {
	l := s.startLookup(false)
	expired, stop := deadlineTimer(deadline)
	defer stop()
	select {
	case <-l.done:
		return l.broker, l.err
	case <-expired:
		return nil, fmt.Errorf("looking the group's coordinator up outlasted the commit's deadline: %w", errKafkaCommitDeadline)
	case <-s.closing:
		return nil, errGroupClosing
	}
}

// startLookup returns the coordinator lookup in flight, or starts one.
// refresh asks Kafka even if sarama has a coordinator cached; asked for
// while a lookup that reads the cache runs, it makes that lookup ask Kafka
// once more before it ends.
func (s *kafkaOffsetStore) startLookup(refresh bool) *coordinatorLookup {
	s.lookupMu.Lock()
	defer s.lookupMu.Unlock()
	if l := s.lookup; l != nil {
		if refresh && !l.refreshing {
			l.again = true
		}
		return l
	}
	l := &coordinatorLookup{done: make(chan struct{}), refreshing: refresh}
	s.lookup = l
	go s.runLookup(l)
	return l
}

// runLookup makes lookup l, in rounds (see startLookup), and ends it.
func (s *kafkaOffsetStore) runLookup(l *coordinatorLookup) {
	s.lookupMu.Lock()
	for {
		refresh := l.refreshing
		s.lookupMu.Unlock()
		var broker *sarama.Broker
		var err error
		if refresh {
			err = s.client.RefreshCoordinator(s.group)
		}
		if err == nil {
			broker, err = s.client.Coordinator(s.group)
		}
		s.lookupMu.Lock()
		if !l.again {
			l.broker, l.err = broker, err
			s.lookup = nil
			s.lookupMu.Unlock()
			close(l.done)
			return
		}
		l.again, l.refreshing = false, true
	}
}

// refreshIfMoved starts a lookup of the group's coordinator after a
// request failed with err in a way that says it may have moved:
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or no answer at all (a broken
// connection, a broker gone), but not errGroupClosing nor a write the
// commit connection's gate refused past a deadline. A broken connection is
// opened again by whoever uses it next (sarama for the client's, the next
// commit for the commit connection); only a move needs the lookup. It does
// not wait for it: the next request does (coordinator).
func (s *kafkaOffsetStore) refreshIfMoved(err error) {
	var kerr sarama.KError
	if err == nil || errors.Is(err, errGroupClosing) || errors.Is(err, errKafkaCommitDeadline) || (errors.As(err, &kerr) &&
		kerr != sarama.ErrNotCoordinatorForConsumer && kerr != sarama.ErrConsumerCoordinatorNotAvailable) {
		return
	}
	s.startLookup(true)
}

// held implements heldOffsetsReader.
func (s *kafkaOffsetStore) held(maxAge time.Duration, owned func() map[string][]int32) (time.Time, map[topicPartition]int64, error) {
	var read func() (map[topicPartition]int64, error)
	if owned != nil {
		read = func() (map[topicPartition]int64, error) { return s.fetchAll(owned()) }
	}
	return s.check.get(maxAge, read)
}

// fetchAll reads what Kafka holds for parts in one OffsetFetch request to
// the coordinator, not retried (the next commit round reads again). A
// partition whose block carries an error is left out; -1: none stored. It
// runs in heldOffsets' goroutine, whose waiters stop waiting at closing.
func (s *kafkaOffsetStore) fetchAll(parts map[string][]int32) (map[topicPartition]int64, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	coordinator, err := s.coordinator(time.Time{})
	if err != nil {
		return nil, err
	}
	resp, err := coordinator.FetchOffset(sarama.NewOffsetFetchRequest(s.client.Config().Version, s.group, parts))
	if err != nil {
		s.refreshIfMoved(err)
		return nil, err
	}
	if gerr := resp.GroupError(); !errors.Is(gerr, sarama.ErrNoError) {
		s.refreshIfMoved(gerr)
		return nil, gerr
	}
	out := make(map[topicPartition]int64)
	for topic, ps := range parts {
		for _, p := range ps {
			if b := resp.GetBlock(topic, p); b != nil && errors.Is(b.Err, sarama.ErrNoError) {
				out[topicPartition{topic, p}] = max(b.Offset, -1)
			}
		}
	}
	return out, nil
}

// reset implements groupOffsetStore: it deletes each committed offset of
// the group (OffsetDelete, Kafka 2.4), which the broker allows for a group
// without broker-coordinated members.
func (s *kafkaOffsetStore) reset() error {
	resp, err := s.admin.ListConsumerGroupOffsets(s.group, nil)
	if err != nil {
		return fmt.Errorf("list the offsets of group %s: %w", s.group, err)
	}
	blocks := resp.Blocks
	if resp.Version >= 8 && len(resp.Groups) > 0 {
		blocks = resp.Groups[0].Blocks
	}
	for topic, parts := range blocks {
		for partition, block := range parts {
			if block == nil || block.Offset < 0 {
				continue
			}
			if err := s.admin.DeleteConsumerGroupOffset(s.group, topic, partition); err != nil {
				return fmt.Errorf("delete the offset of group %s for %s/%d: %w", s.group, topic, partition, err)
			}
		}
	}
	return nil
}

// heldOffsetsReader is a groupOffsetStore that reads what it holds for many
// partitions in one request (kafkaOffsetStore): the offset manager compares
// that with what the owner committed, once a commit round.
type heldOffsetsReader interface {
	// held returns what the store held for the owned partitions when last
	// read, and when that read was sent; it reads again first when that
	// read is maxAge old, unless owned is nil (then it never waits). err is
	// the failure of the read it waited for (offsets are then nil), or
	// errGroupClosing when Close ended the wait (see heldOffsets).
	held(maxAge time.Duration, owned func() map[string][]int32) (sent time.Time, offsets map[topicPartition]int64, err error)
}

// heldOffsets is the last read of heldOffsetsReader. One read runs at a
// time, in a goroutine of its own and outside mu: a caller that needs a
// fresh read while one runs waits for that one instead of sending its
// own, and a caller that reads nothing never waits.
type heldOffsets struct {
	closing <-chan struct{} // closed: waiting for a read ends (errGroupClosing); nil: never

	mu      sync.Mutex // guards what follows; never held during a read
	sent    time.Time  // when the last read was sent; zero: never
	offsets map[topicPartition]int64
	err     error         // the last read's failure
	reading chan struct{} // closed when the read in flight ends; nil: none in flight
}

// get returns the last read and when it was sent, reading again with read
// first when it is maxAge old (never when read is nil, and then it does not
// wait): it waits for that read, or the one in flight, and returns its
// failure, if any. A wait that closing ends returns the last read with
// errGroupClosing; the read goes on and is kept when it ends.
func (h *heldOffsets) get(maxAge time.Duration, read func() (map[topicPartition]int64, error)) (time.Time, map[topicPartition]int64, error) {
	h.mu.Lock()
	if read == nil || time.Since(h.sent) < maxAge {
		defer h.mu.Unlock()
		return h.sent, h.offsets, nil
	}
	done := h.reading
	if done == nil {
		done = make(chan struct{})
		h.reading = done
		go h.read(time.Now(), read, done)
	}
	h.mu.Unlock()
	var err error
	select {
	case <-done:
	case <-h.closing:
		err = errGroupClosing
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		err = h.err
	}
	return h.sent, h.offsets, err
}

// read makes a read sent at sent and keeps its result (offsets nil if it
// failed, so a failed read is not made again before maxAge either); done
// is closed once it is kept.
func (h *heldOffsets) read(sent time.Time, read func() (map[topicPartition]int64, error), done chan struct{}) {
	offsets, err := read()
	h.mu.Lock()
	h.sent, h.offsets, h.err = sent, offsets, err
	h.reading = nil
	h.mu.Unlock()
	close(done)
}

// ErrResetWhileMembersRun is returned, wrapped with the group's name and
// the members' ids, by JoinConsumerGroup (and the other joins) when
// Offsets.ResetOffsets is set with Offsets.Storage kafka or dual and other
// members of the group are registered. A ZooKeeper reset fences the
// partitions' owners (their epochs move); a reset of Kafka's offsets
// cannot: a running member may read the old Kafka offset back, or commit
// one after the reset. So it is refused, as kafka-consumer-groups.sh
// --reset-offsets refuses a group with active members. Close every member
// first (one that crashed stays registered until its ZooKeeper session
// expires). It is also returned, after the reset, when a member registered
// while it was made: the reset may then not hold.
var ErrResetWhileMembersRun = errors.New("consumergroup: offsets cannot be reset in Kafka while other members of the group run")

// openKafkaOffsets sets up the Kafka offset store when Offsets.Storage uses
// it, and makes the reset Offsets.ResetOffsets asks for (see
// resetWithKafka).
func (cg *ConsumerGroup) openKafkaOffsets() error {
	if !cg.config.Offsets.Storage.usesKafka() {
		return nil
	}
	store, err := newKafkaOffsetStore(cg.client, cg.name, cg.closeExpired)
	if err != nil {
		return fmt.Errorf("consumergroup: %w", err)
	}
	store.stopping = cg.stopper
	cg.kafkaOffsets = store
	if cg.config.Offsets.ResetOffsets {
		return cg.resetWithKafka(store)
	}
	return nil
}

// resetWithKafka resets the group's offsets in Kafka and then in ZooKeeper,
// only while no other member is registered (ErrResetWhileMembersRun).
// Kafka goes first: a member that starts in between reads no Kafka offset
// once ZooKeeper's reset is made, so it cannot take the old one back to
// ZooKeeper; and the members are listed again afterwards, since one that
// registered meanwhile may have committed an old offset to Kafka after its
// deletion.
func (cg *ConsumerGroup) resetWithKafka(store groupOffsetStore) error {
	storage := cg.config.Offsets.Storage
	others, err := cg.otherMembers()
	if err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s: %w", cg.name, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: group %s has other members registered (%s): Offsets.ResetOffsets with Offsets.Storage %q "+
			"deletes the group's offsets in Kafka, which knows nothing of their claims; close them first",
			ErrResetWhileMembersRun, cg.name, strings.Join(others, ", "), string(storage))
	}
	if err := store.reset(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in Kafka: %w", err)
	}
	if err := cg.group.ResetOffsets(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in ZooKeeper (Kafka's are deleted): %w", err)
	}
	if others, err = cg.otherMembers(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s after the reset: %w", cg.name, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: members of group %s registered while Offsets.ResetOffsets (Offsets.Storage %q) reset its offsets (%s): "+
			"the reset may not hold (one of them may have committed an offset from before it); close them and join again",
			ErrResetWhileMembersRun, cg.name, string(storage), strings.Join(others, ", "))
	}
	return nil
}

// otherMembers returns the ids of the group's registered members other
// than this instance.
func (cg *ConsumerGroup) otherMembers() ([]string, error) {
	instances, err := cg.group.Instances()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, i := range instances {
		if cg.instance == nil || i.ID != cg.instance.ID {
			ids = append(ids, i.ID)
		}
	}
	return ids, nil
}

// Bounds of the attempts of one commit to Kafka (see commitKafka).
const (
	kafkaCommitBackoff    = 100 * time.Millisecond // after the first failed attempt; doubles
	kafkaCommitMaxBackoff = time.Second
)

// errKafkaCommitDeadline: a commit to Kafka gave up, its deadline too near
// for another attempt, or passed before an attempt's request could go out
// (the coordinator lookup outlasted it). The offset stays pending; the next
// round tries again.
var errKafkaCommitDeadline = errors.New("no time left for another attempt before the commit's deadline")

// commitKafka commits target to Kafka if force is set or it is due (see
// kafkaDue), provided the claim still holds as far as this instance knows
// (kafkaFence). It records target as committed: with kafka storage that is
// the group's commit; with dual storage target is already committed to
// ZooKeeper. The caller holds o.commitMu.
//
// Kafka knows nothing of the claim's epoch, so a commit to Kafka cannot be
// made atomic with the epoch check the way a ZooKeeper commit is. What
// stands in for it: the claim watch marks the partition lost within a
// ZooKeeper round trip of any change to the claim, the session fence pauses
// delivery and commits before the session can expire and the partition be
// claimed elsewhere, and the claim is checked before every attempt, each a
// single OffsetCommit request (retryKafkaCommit), and again immediately
// before that request is sent, once the coordinator is known (a lookup can
// take seconds: see kafkaOffsetStore.coordinator). The commit's deadline is
// the shorter of Zookeeper.Timeout and Net.ReadTimeout after it began: no
// attempt starts later, no wait for a coordinator lookup lasts longer, and
// no request is sent after it; an attempt waits for its answer at most
// Net.ReadTimeout, and no longer once Close stopped waiting for the
// partitions (errGroupClosing). What remains is the window of one request:
// one already sent when the claim moves can land after the new owner's
// commit. It only ever stores an offset this instance marked (so no message
// is skipped), and the new owner's next commit round finds it (kafkaDue)
// and writes its own offset again: within one commit interval plus that
// round's requests.
func (om *zookeeperOffsetManager) commitKafka(o *ownedOffsets, target int64, force bool) error {
	now := time.Now()
	if target < 0 || (!force && !om.kafkaDue(o, target, now, false)) {
		return nil
	}
	deadline := now.Add(om.kafkaCommitBudget())
	var sent time.Time
	err := retryKafkaCommit(deadline, time.Now, time.Sleep,
		func() error { return om.kafkaFence(o) },
		func() error {
			var fenced error
			err := om.sendKafkaCommit(o.tp, target, deadline, func() error {
				if fenced = om.kafkaFence(o); fenced == nil {
					sent = time.Now()
				}
				return fenced
			})
			switch {
			case fenced != nil:
				return fenced
			case err != nil:
				return kafkaCommitError{err}
			}
			return nil
		})
	var failed kafkaCommitError
	switch {
	case errors.Is(err, kazoo.ErrClaimLost):
		return nil // the claim watch reports the loss
	case errors.As(err, &failed):
		return newPartitionError(o.tp.Topic, o.tp.Partition, err)
	case err != nil:
		return newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("offset %d not committed to Kafka: %w", target, err))
	}
	o.kafka.next.Store(target)
	o.kafka.at.Store(sent.UnixNano())
	o.tracker.Committed(target)
	if om.storage == OffsetStorageKafka {
		m := om.cg.met()
		m.commits.Inc(1)
		m.commitLatency.Update(ms(time.Since(now)))
		if o.worker != nil {
			if hwm := o.worker.hwm.Load(); hwm > 0 {
				m.lag(o.tp).Update(max(hwm-target, 0))
			}
		}
		if om.config.VerboseLogging {
			om.cg.log.Debug("committed to Kafka", "topic", o.tp.Topic, "partition", o.tp.Partition, "next", target)
		}
	}
	return nil
}

// sendKafkaCommit makes one attempt of a commit of next to Kafka for tp:
// through the store's commitFenced when it has one (ready is called right
// before the request goes out), or else ready, then the store's commit,
// waited for until Close stops waiting for the partitions (closeExpired:
// an error wrapping errKafkaCommitInDoubt, the commit going on). An error
// of ready is returned as it is, and nothing is sent.
func (om *zookeeperOffsetManager) sendKafkaCommit(tp topicPartition, next int64, deadline time.Time, ready func() error) error {
	store := om.cg.kafkaOffsets
	if f, ok := store.(fencedCommitter); ok {
		return f.commitFenced(tp.Topic, tp.Partition, next, deadline, ready)
	}
	if err := ready(); err != nil {
		return err
	}
	_, err := untilClosing(om.cg.closeExpired, func() (struct{}, error) {
		return struct{}{}, store.commit(tp.Topic, tp.Partition, next)
	}, nil)
	if errors.Is(err, errGroupClosing) {
		return fmt.Errorf("offset %d for %s/%d: %w", next, tp.Topic, tp.Partition, errKafkaCommitInDoubt)
	}
	return err
}

// retryKafkaCommit makes attempt, each time right after fence allows it,
// until it succeeds, fence refuses (its error is returned), it fails for
// good (not retryableCommit), or the deadline is too near for another
// attempt (the last error, wrapping errKafkaCommitDeadline). Between
// attempts it sleeps kafkaCommitBackoff, doubling up to
// kafkaCommitMaxBackoff. now and sleep are the clock (tests pass a fake).
func retryKafkaCommit(deadline time.Time, now func() time.Time, sleep func(time.Duration), fence, attempt func() error) error {
	backoff := kafkaCommitBackoff
	for {
		if err := fence(); err != nil {
			return err
		}
		err := attempt()
		if err == nil || !retryableCommit(err) {
			return err
		}
		if deadline.Sub(now()) <= backoff {
			return kafkaCommitError{fmt.Errorf("%w: %w", errKafkaCommitDeadline, err)}
		}
		sleep(backoff)
		backoff = min(2*backoff, kafkaCommitMaxBackoff)
	}
}

// kafkaCommitBudget is how long after a commit to Kafka began an attempt
// of it may still start: the shorter of the ZooKeeper session timeout (past
// it the claim may be another's) and Net.ReadTimeout (one attempt's wait).
func (om *zookeeperOffsetManager) kafkaCommitBudget() time.Duration {
	c := om.cg.config
	if c == nil || c.Config == nil || c.Zookeeper == nil {
		return kazoo.DefaultSessionTimeout
	}
	return min(c.Zookeeper.Timeout, c.Net.ReadTimeout)
}

// kafkaDue reports whether Kafka should be given target for o now: it
// differs from what this instance last wrote, or that was written
// kafkaRefresh ago (kafkaState.due); or Kafka was seen holding something
// else after that write was sent (an old owner's commit that landed late,
// an operator's change, an expiry). What Kafka holds is read in one
// OffsetFetch request for every owned partition, once a commit round:
// refresh (hasWork) reads it again when half a commit interval old, which
// holds the round up for that request (at most the coordinator lookup and
// Net.ReadTimeout; a failed read is not retried before the next round);
// commitKafka uses the last read as it stands, never waiting for one in
// flight (heldOffsets). With Offsets.CommitInterval 0 it is never read.
func (om *zookeeperOffsetManager) kafkaDue(o *ownedOffsets, target int64, now time.Time, refresh bool) bool {
	if o.kafka.due(target, now) {
		return true
	}
	reader, ok := om.cg.kafkaOffsets.(heldOffsetsReader)
	if target < 0 || !ok || om.config.CommitInterval <= 0 {
		return false
	}
	var owned func() map[string][]int32
	if refresh {
		owned = om.ownedByTopic
	}
	sent, held, err := reader.held(om.config.CommitInterval/2, owned)
	if err != nil {
		om.cg.log.Debug("reading the group's offsets in Kafka failed; the next round reads again", "err", err)
	}
	n, ok := held[o.tp]
	return ok && n != target && sent.UnixNano() > o.kafka.at.Load()
}

// ownedByTopic lists the tracked partitions by topic.
func (om *zookeeperOffsetManager) ownedByTopic() map[string][]int32 {
	out := make(map[string][]int32)
	for _, o := range om.snapshot() {
		out[o.tp.Topic] = append(out[o.tp.Topic], o.tp.Partition)
	}
	return out
}

// errFencedOff: the instance is fenced off from ZooKeeper, so it cannot
// know whether its claims still hold; commits to Kafka wait.
var errFencedOff = errors.New("fenced off from ZooKeeper (the claim cannot be confirmed); the commit waits")

// kafkaFence returns nil when a commit to Kafka may be made for o: its
// claim has not been seen to end (kazoo.ErrClaimLost otherwise), the
// ZooKeeper session holding it is the current one, and the session fence
// does not hold delivery paused (errFencedOff). Partitions tracked without
// a claim (InitializePartition) are not fenced, as their ZooKeeper commits
// are not.
func (om *zookeeperOffsetManager) kafkaFence(o *ownedOffsets) error {
	if o.claim == nil {
		return nil
	}
	if o.lost.Load() {
		return kazoo.ErrClaimLost
	}
	if om.cg.kazoo.SessionID() != o.claim.SessionID {
		return fmt.Errorf("the ZooKeeper session holding the claim ended: %w", kazoo.ErrClaimLost)
	}
	if om.cg.gate.Paused() {
		return errFencedOff
	}
	return nil
}

// hasWork reports whether commit has something to do for o: a pending
// offset, or (with Kafka storage) an offset Kafka should be given
// (kafkaDue, which reads what Kafka holds once a round).
func (om *zookeeperOffsetManager) hasWork(o *ownedOffsets) bool {
	if _, dirty := o.tracker.Pending(); dirty {
		return true
	}
	return om.storage.usesKafka() && om.kafkaDue(o, o.tracker.CommittedOffset(), time.Now(), true)
}

// kafkaCommitError is a commit request to Kafka that failed (as opposed
// to one the claim's fence held back).
type kafkaCommitError struct{ err error }

func (e kafkaCommitError) Error() string { return e.err.Error() }
func (e kafkaCommitError) Unwrap() error { return e.err }

// retryableCommit reports whether a failed commit may succeed if made again
// at once: a ZooKeeper error kazoo calls retryable, or a Kafka commit that
// failed for a reason other than the group's state, its permissions or the
// protocol version (a coordinator moving or loading, a timeout, a lost
// connection) and did not already run out of its deadline or end because
// Close stopped waiting (errGroupClosing).
func retryableCommit(err error) bool {
	if kazoo.IsRetryable(err) {
		return true
	}
	var kc kafkaCommitError
	if !errors.As(err, &kc) {
		return false
	}
	for _, permanent := range []error{
		errKafkaCommitDeadline, errGroupClosing, sarama.ErrClosedClient, sarama.ErrUnsupportedVersion,
		sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration, sarama.ErrRebalanceInProgress,
		sarama.ErrGroupAuthorizationFailed, sarama.ErrTopicAuthorizationFailed,
		sarama.ErrOffsetMetadataTooLarge, sarama.ErrUnknownTopicOrPartition,
	} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// deadlineTimer returns a channel that fires at deadline (never for a zero
// deadline) and the function that stops its timer.
func deadlineTimer(deadline time.Time) (<-chan time.Time, func()) {
	if deadline.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(deadline))
	return t.C, func() { t.Stop() }
}
