package offsets

import (
	"encoding/binary"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// brokerFixture is a MockBroker that is the only broker of a cluster with
// topic t (one partition) and the coordinator of group "g", a client of
// it, and the Kafka offsets of "g" over that client. Everything is closed
// when the test ends.
type brokerFixture struct {
	broker *sarama.MockBroker
	client sarama.Client
	store  *KafkaOffsets
	writes *writeLog // the requests the client writes; with logWrites
}

// brokerOpts changes what newBrokerFixture sets up.
type brokerOpts struct {
	// handlers are added to the defaults (Metadata, FindCoordinator for
	// "g"), replacing them by name; a nil value removes a default.
	handlers func(b *sarama.MockBroker) map[string]sarama.MockResponse
	latency  time.Duration            // of every answer
	notify   func(bytesIn, out int)   // MockBroker's notifier
	logWrite bool                     // record the client's writes
	closing  <-chan struct{}          // KafkaConfig.Closing
	config   func(cfg *sarama.Config) // more client settings
	cached   bool                     // look the coordinator up before the test
}

func newBrokerFixture(t *testing.T, o brokerOpts) *brokerFixture {
	t.Helper()
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	if o.latency > 0 {
		b.SetLatency(o.latency)
	}
	if o.notify != nil {
		b.SetNotifier(o.notify)
	}
	handlers := map[string]sarama.MockResponse{
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).SetController(b.BrokerID()).SetLeader("t", 0, b.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b),
	}
	if o.handlers != nil {
		for name, h := range o.handlers(b) {
			if h == nil {
				delete(handlers, name)
			} else {
				handlers[name] = h
			}
		}
	}
	b.SetHandlerByMap(handlers)
	f := &brokerFixture{broker: b}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0 // the mock answers no ApiVersions request
	cfg.ApiVersionsRequest = false
	if o.logWrite {
		f.writes = &writeLog{}
		cfg.Net.Proxy.Enable = true
		cfg.Net.Proxy.Dialer = loggingDialer{f.writes}
	}
	if o.config != nil {
		o.config(cfg)
	}
	client, err := sarama.NewClient([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	f.client = client
	if o.cached {
		if _, err := client.Coordinator("g"); err != nil {
			t.Fatal(err)
		}
	}
	store, err := NewKafkaOffsets(client, KafkaConfig{Group: "g", Closing: o.closing, OwnConns: testOwnConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	f.store = store
	return f
}

// requests counts the requests of type R the broker received.
func requests[R any](b *sarama.MockBroker) int {
	n := 0
	for _, rr := range b.History() {
		if _, ok := rr.Request.(R); ok {
			n++
		}
	}
	return n
}

// testOwnConns is KafkaConfig.OwnConns for tests: the client's
// configuration, dialed through a trackingDialer.
func testOwnConns(conf *sarama.Config) (*sarama.Config, Dialer) {
	var inner interface {
		Dial(network, addr string) (net.Conn, error)
	} = &net.Dialer{Timeout: conf.Net.DialTimeout}
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		inner = conf.Net.Proxy.Dialer
	}
	d := &trackingDialer{dial: inner.Dial, open: make(map[net.Conn]struct{})}
	c := *conf
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = d
	return &c, d
}

// trackingDialer keeps the sockets it opened, so CloseAll can shut them.
type trackingDialer struct {
	dial   func(network, addr string) (net.Conn, error)
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

func (d *trackingDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := d.dial(network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	d.open[c] = struct{}{}
	return c, nil
}

func (d *trackingDialer) CloseAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for c := range d.open {
		_ = c.Close()
		delete(d.open, c)
	}
}

// writeLog records when the client writes each Kafka request (api key) on
// a connection: what the client sends, not when the broker reads it.
type writeLog struct {
	mu     sync.Mutex
	writes []struct {
		key int16
		at  time.Time
	}
}

func (l *writeLog) first(key int16) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.writes {
		if w.key == key {
			return w.at, true
		}
	}
	return time.Time{}, false
}

// count returns how many requests with key were written.
func (l *writeLog) count(key int16) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.writes {
		if w.key == key {
			n++
		}
	}
	return n
}

// waitFor waits until a request with key was written.
func (l *writeLog) waitFor(key int16) {
	for {
		if _, ok := l.first(key); ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type loggingConn struct {
	net.Conn
	log *writeLog
}

func (c loggingConn) Write(p []byte) (int, error) {
	if len(p) >= 6 {
		c.log.mu.Lock()
		c.log.writes = append(c.log.writes, struct {
			key int16
			at  time.Time
		}{int16(binary.BigEndian.Uint16(p[4:6])), time.Now()})
		c.log.mu.Unlock()
	}
	return c.Conn.Write(p)
}

type loggingDialer struct{ log *writeLog }

func (d loggingDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return loggingConn{c, d.log}, nil
}

const (
	apiOffsetCommit = 8
	apiOffsetFetch  = 9
)

// fakeOffsetStore is a GroupOffsets in memory; fail makes commits fail.
type fakeOffsetStore struct {
	mu      sync.Mutex
	offsets map[TopicPartition]int64
	commits int
	fail    error
}

func newFakeOffsetStore() *fakeOffsetStore {
	return &fakeOffsetStore{offsets: map[TopicPartition]int64{}}
}

func (f *fakeOffsetStore) Fetch(topic string, partition int32) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.offsets[TopicPartition{topic, partition}]; ok {
		return n, nil
	}
	return -1, nil
}

func (f *fakeOffsetStore) Commit(topic string, partition int32, next int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.commits++
	f.offsets[TopicPartition{topic, partition}] = next
	return nil
}

func (f *fakeOffsetStore) Reset() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.offsets)
	return nil
}

func (f *fakeOffsetStore) get(tp TopicPartition) (int64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.offsets[tp]
	if !ok {
		n = -1
	}
	return n, f.commits
}

// newCommitter returns a Committer of kind over kafka (and no ZooKeeper),
// its commit loop not started.
func newCommitter(kind Kind, kafka GroupOffsets) *Committer {
	return New(Config{Kind: kind}, Deps{Log: slog.New(slog.DiscardHandler), Kafka: kafka,
		Session: func() int64 { return 0 }, FencedOff: func() bool { return false }})
}

// kafkaOnly returns a Committer with Kafka storage over store.
func kafkaOnly(store GroupOffsets) *Committer { return newCommitter(KindKafka, store) }

// adopt starts tracking tp at next, its offset node at version.
func (c *Committer) adopt(tp TopicPartition, claim *kazoo.PartitionClaim, next int64, version int32, owner Owner) *Partition {
	return c.Adopt(tp, claim, Stored{ZkNext: next, ZkVersion: version, KafkaNext: -1}, owner)
}

// kafkaStoreOf returns c's Kafka store (the Kafka side of dual storage).
func (c *Committer) kafkaStoreOf() *kafkaStore {
	switch s := c.store.(type) {
	case *kafkaStore:
		return s
	case *dualStore:
		return s.kafka
	}
	return nil
}

// bareOwner is an Owner that records what it is told.
type bareOwner struct {
	mu    sync.Mutex
	lost  bool
	seeks []int64
}

func (o *bareOwner) CommitResult(r CommitResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.Lost {
		o.lost = true
	}
	if r.Moved {
		o.seeks = append(o.seeks, r.Stored)
	}
}

func (o *bareOwner) HighWaterMark() int64 { return 0 }

// commitToKafka commits what each of parts holds to Kafka, as a commit
// round would.
func commitToKafka(t *testing.T, om *Committer, parts ...*Partition) {
	t.Helper()
	for _, o := range parts {
		o.commitMu.Lock()
		err := om.kafkaStoreOf().commitKafka(o, o.Tracker.CommittedOffset(), true)
		o.commitMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
}
