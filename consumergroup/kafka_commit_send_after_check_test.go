package consumergroup

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

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

// A commit's request is written right after its claim check, whatever else
// is in flight to the coordinator: sarama's Broker holds its lock for a
// whole round trip, so over the client's connection the commit would wait,
// after the check, for the read of what Kafka holds (here, answered 1.5 s
// later), the admin's requests or other partitions' commits, and go out
// after its deadline on a claim check that old. Commits go over a
// connection of their own (commitConn).
func TestKafkaCommitNotDelayedAfterClaimCheck(t *testing.T) {
	const latency = 1500 * time.Millisecond // the coordinator answers slowly (loaded)
	b := sarama.NewMockBroker(t, 1)
	defer b.Close()
	b.SetLatency(latency)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).SetController(b.BrokerID()).SetLeader("t", 0, b.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b),
		"OffsetFetchRequest":     sarama.NewMockOffsetFetchResponse(t).SetOffset("g", "t", 0, 10, "", sarama.ErrNoError).SetError(sarama.ErrNoError),
		"OffsetCommitRequest":    sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNoError),
	})
	log := &writeLog{}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0
	cfg.ApiVersionsRequest = false
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = loggingDialer{log}
	client, err := sarama.NewClient([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	store, err := newKafkaOffsetStore(client, "g", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	if _, err := store.coordinator(time.Time{}); err != nil { // cached from here on
		t.Fatal(err)
	}

	// A commit round's read of what Kafka holds, in flight.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _, _ = store.held(0, func() map[string][]int32 { return map[string][]int32{"t": {0}} })
	}()
	for {
		if _, ok := log.first(apiOffsetFetch); ok {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	begin := time.Now()
	deadline := begin.Add(500 * time.Millisecond) // the commit's deadline
	var checkedAt time.Time
	err = store.commitFenced("t", 0, 42, deadline, func() error {
		checkedAt = time.Now() // the claim holds now; say it is lost 100 ms later
		return nil
	})
	<-readDone
	if checkedAt.IsZero() {
		t.Fatalf("the claim was never checked (err %v)", err)
	}
	sentAt, ok := log.first(apiOffsetCommit)
	if !ok {
		t.Fatalf("no OffsetCommit sent (err %v)", err)
	}
	t.Logf("claim checked %v after the commit began; OffsetCommit written %v after that check (deadline %v after the begin); err %v",
		checkedAt.Sub(begin).Round(time.Millisecond), sentAt.Sub(checkedAt).Round(time.Millisecond),
		deadline.Sub(begin), err)
	if sentAt.After(deadline) {
		t.Errorf("the OffsetCommit was written %v after the commit's deadline, %v after its claim check passed",
			sentAt.Sub(deadline).Round(time.Millisecond), sentAt.Sub(checkedAt).Round(time.Millisecond))
	}
}

// A commit that Close stopped waiting for (closeExpired: errGroupClosing,
// reported on Errors() by the worker's final commit) is not written
// afterwards, once Close closed the ZooKeeper session and another member
// may own the partition: it was written right after its check (and is
// reported in doubt), or never is (the commit connection's socket is shut).
func TestKafkaCommitAbandonedAtCloseNotWrittenAfterwards(t *testing.T) {
	const latency = 1500 * time.Millisecond
	b := sarama.NewMockBroker(t, 1)
	defer b.Close()
	b.SetLatency(latency)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).SetController(b.BrokerID()).SetLeader("t", 0, b.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b),
		"OffsetFetchRequest":     sarama.NewMockOffsetFetchResponse(t).SetOffset("g", "t", 0, 10, "", sarama.ErrNoError).SetError(sarama.ErrNoError),
		"OffsetCommitRequest":    sarama.NewMockOffsetCommitResponse(t).SetError("g", "t", 0, sarama.ErrNoError),
	})
	log := &writeLog{}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0
	cfg.ApiVersionsRequest = false
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = loggingDialer{log}
	client, err := sarama.NewClient([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	closing := make(chan struct{})
	store, err := newKafkaOffsetStore(client, "g", closing)
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	if _, err := store.coordinator(time.Time{}); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _, _ = store.held(0, func() map[string][]int32 { return map[string][]int32{"t": {0}} })
	}()
	for {
		if _, ok := log.first(apiOffsetFetch); ok {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.AfterFunc(200*time.Millisecond, func() { close(closing) })
	err = store.commitFenced("t", 0, 42, time.Now().Add(time.Minute), func() error { return nil })
	returned := time.Now()
	t.Logf("commitFenced returned %v", err)
	<-readDone
	time.Sleep(latency + 500*time.Millisecond)
	sentAt, ok := log.first(apiOffsetCommit)
	if ok && sentAt.After(returned) {
		t.Errorf("commitFenced returned %v (Close stopped waiting), and its OffsetCommit was written %v later",
			err, sentAt.Sub(returned).Round(time.Millisecond))
	}
	if !errors.Is(err, errGroupClosing) || ok != errors.Is(err, errKafkaCommitInDoubt) {
		t.Errorf("commitFenced = %v, OffsetCommit written %v: want errGroupClosing, in doubt (errKafkaCommitInDoubt) iff written", err, ok)
	}
}

// A throttle the coordinator asks for in a commit's answer is waited out
// before the next commit's claim check, not by sarama between that check
// and the request: a commit whose deadline comes before the throttle ends
// sends nothing, and the next one is checked once the throttle has passed
// and written right after its check.
func TestKafkaCommitWaitsOutThrottleBeforeClaimCheck(t *testing.T) {
	const throttle = time.Second
	b := sarama.NewMockBroker(t, 1)
	defer b.Close()
	answer := &sarama.OffsetCommitResponse{Version: 6, ThrottleTimeMs: int32(throttle / time.Millisecond)}
	answer.AddError("t", 0, sarama.ErrNoError)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).SetController(b.BrokerID()).SetLeader("t", 0, b.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b),
		"OffsetCommitRequest":    sarama.NewMockWrapper(answer),
	})
	log := &writeLog{}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0 // OffsetCommit v6
	cfg.ApiVersionsRequest = false
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = loggingDialer{log}
	client, err := sarama.NewClient([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	store, err := newKafkaOffsetStore(client, "g", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	commits := func() int {
		log.mu.Lock()
		defer log.mu.Unlock()
		n := 0
		for _, w := range log.writes {
			if w.key == apiOffsetCommit {
				n++
			}
		}
		return n
	}
	if err := store.commitFenced("t", 0, 1, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	throttled := time.Now()

	checked := false
	err = store.commitFenced("t", 0, 2, time.Now().Add(throttle/2), func() error { checked = true; return nil })
	if !errors.Is(err, errKafkaCommitDeadline) || checked || commits() != 1 {
		t.Errorf("a commit due before the throttle ends: %v, claim checked %v, %d requests written; want errKafkaCommitDeadline, no check, 1",
			err, checked, commits())
	}

	var checkedAt time.Time
	err = store.commitFenced("t", 0, 3, time.Now().Add(5*time.Second), func() error { checkedAt = time.Now(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	last := log.writes[len(log.writes)-1]
	log.mu.Unlock()
	if checkedAt.Sub(throttled) < throttle-50*time.Millisecond {
		t.Errorf("the claim was checked %v after the throttled answer, want after the throttle (%v)", checkedAt.Sub(throttled), throttle)
	}
	if last.key != apiOffsetCommit || last.at.Sub(checkedAt) > 100*time.Millisecond {
		t.Errorf("the request was written %v after the claim check", last.at.Sub(checkedAt))
	}
}

// The commit connection's socket lets a commit's request through only
// before its deadline and while closing is open.
func TestKafkaCommitWriteGate(t *testing.T) {
	closing := make(chan struct{})
	g := &writeGate{closing: closing}
	if err := g.allow(); err != nil {
		t.Fatalf("unarmed (a handshake): %v", err)
	}
	w := g.arm(time.Now().Add(time.Hour))
	if err := g.allow(); err != nil || !g.wrote(w) {
		t.Fatalf("armed before the deadline: %v, wrote %v", err, g.wrote(w))
	}
	w = g.arm(time.Now().Add(-time.Millisecond))
	if err := g.allow(); !errors.Is(err, errKafkaCommitDeadline) || g.wrote(w) {
		t.Fatalf("armed past the deadline: %v, wrote %v", err, g.wrote(w))
	}
	g.disarm()
	close(closing)
	if err := g.allow(); !errors.Is(err, errGroupClosing) {
		t.Fatalf("once closing: %v", err)
	}
}
