package offsets

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/brokerconn"
)

// GroupOffsets is a store of the group's committed offsets other than
// ZooKeeper: Kafka's group offsets (KafkaOffsets). Offsets are "next"
// offsets, as in ZooKeeper; -1 means none stored. It knows nothing of
// claims: the committer decides whether a commit may be made.
type GroupOffsets interface {
	// Fetch returns the stored next offset of a partition, -1 if none.
	Fetch(topic string, partition int32) (int64, error)
	// Commit stores next as the partition's next offset, in one attempt:
	// the committer decides whether to try again (retryKafkaCommit).
	Commit(topic string, partition int32, next int64) error
	// Reset deletes every stored offset of the group.
	Reset() error
}

// fencedCommitter is a GroupOffsets whose commit may block before its
// request goes out (KafkaOffsets looks the coordinator up first): the
// committer's checks then have to be made after that, right before the
// request.
type fencedCommitter interface {
	// commitFenced is Commit, with ready (when not nil) called right
	// before the request is sent: an error of ready is returned as it is,
	// and nothing is sent. Nothing is sent either once deadline (none when
	// zero) has passed: the error then wraps errKafkaCommitDeadline.
	commitFenced(topic string, partition int32, next int64, deadline time.Time, ready func() error) error
}

// KafkaOffsets stores the group's offsets as Kafka group offsets, through
// the group coordinator: OffsetFetch to read, standalone OffsetCommit
// requests to write, one request per attempt, over a connection of its own
// (commitConn), so that nothing waits between the claim check and the
// request. Once closing is closed every wait ends with ErrGroupClosing.
// See docs/kafka-offsets.md.
type KafkaOffsets struct {
	client  sarama.Client
	admin   sarama.ClusterAdmin // shares client; never closed (that would close the client)
	group   string
	closing <-chan struct{} // closed: stop waiting for Kafka (ErrGroupClosing); nil: never
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
	ownConns  func(conf *sarama.Config) (*sarama.Config, Dialer)
}

// KafkaConfig configures KafkaOffsets.
type KafkaConfig struct {
	Group string // the group's name
	// Closing, when closed, ends every wait for Kafka (ErrGroupClosing);
	// nil: never.
	Closing <-chan struct{}
	// Stopping, when closed (the group's Close began), has the commit
	// connection closed as soon as no commit uses it; nil: never.
	Stopping <-chan struct{}
	// OwnConns returns the configuration of the store's own commit
	// connection, dialed through the returned Dialer (the client's TLS,
	// SASL, proxy and dial settings; metrics never unregistered). Nil:
	// as the fetcher's own connections are (package brokerconn).
	OwnConns func(conf *sarama.Config) (*sarama.Config, Dialer)
}

// brokerConns dials the commit connection as package brokerconn dials the
// fetcher's own connections.
func brokerConns(conf *sarama.Config) (*sarama.Config, Dialer) {
	d := brokerconn.NewDialer(conf)
	return brokerconn.Config(conf, d), d
}

// Dialer dials the commit connection's sockets and shuts them all at once
// (CloseAll), a request in flight included.
type Dialer interface {
	Dial(network, addr string) (net.Conn, error)
	CloseAll()
}

// NewKafkaOffsets returns the Kafka store of the group's offsets over
// client.
func NewKafkaOffsets(client sarama.Client, cfg KafkaConfig) (*KafkaOffsets, error) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("Kafka offset storage: %w", err)
	}
	if cfg.OwnConns == nil {
		cfg.OwnConns = brokerConns
	}
	return &KafkaOffsets{client: client, admin: admin, group: cfg.Group, closing: cfg.Closing, stopping: cfg.Stopping,
		ownConns: cfg.OwnConns, check: heldOffsets{closing: cfg.Closing}, connSem: make(chan struct{}, 1)}, nil
}

// Fetch implements GroupOffsets.
func (s *KafkaOffsets) Fetch(topic string, partition int32) (int64, error) {
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

// Commit implements GroupOffsets: commitFenced without a deadline or a
// check.
func (s *KafkaOffsets) Commit(topic string, partition int32, next int64) error {
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
func (s *KafkaOffsets) commitFenced(topic string, partition int32, next int64, deadline time.Time, ready func() error) error {
	err := s.commitOnce(topic, partition, next, deadline, ready)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errKafkaCommitInDoubt):
		return fmt.Errorf("offset %d of group %s for %s/%d: %w", next, s.group, topic, partition, err)
	}
	return fmt.Errorf("commit offset %d of group %s for %s/%d to Kafka: %w", next, s.group, topic, partition, err)
}

// commitOnce sends the OffsetCommit request of commitFenced, built as
// sarama's admin builds it for the configured Version. An error of ready
// is returned as it is.
func (s *KafkaOffsets) commitOnce(topic string, partition int32, next int64, deadline time.Time, ready func() error) error {
	if s.closed.Load() {
		return ErrGroupClosing
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
		return ErrGroupClosing
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
			return ErrGroupClosing
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

// Reset implements GroupOffsets: it deletes each committed offset of
// the group (OffsetDelete, Kafka 2.4), which the broker allows for a group
// without broker-coordinated members.
func (s *KafkaOffsets) Reset() error {
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
