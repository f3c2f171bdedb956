package monitor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/zkgroup/kafka/kazoo"
)

var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeSession is a ZooKeeper session whose state the test sets.
type fakeSession struct {
	mu      sync.Mutex
	s       kazoo.Session
	changed chan struct{}
}

func newFakeSession() *fakeSession {
	return &fakeSession{s: kazoo.Session{Status: kazoo.SessionConnected, Generation: 1}, changed: make(chan struct{})}
}

func (f *fakeSession) Session() (kazoo.Session, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, f.changed
}

// set changes the session's state and wakes its watchers.
func (f *fakeSession) set(status kazoo.SessionStatus, generation uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.Status, f.s.Generation = status, generation
	close(f.changed)
	f.changed = make(chan struct{})
}

// fakeGauges records what the monitors set.
type fakeGauges struct {
	mu          sync.Mutex
	connected   []bool
	expirations int64
	fenceClears int
	lags        map[TopicPartition]int64
}

func newFakeGauges() *fakeGauges { return &fakeGauges{lags: make(map[TopicPartition]int64)} }

func (g *fakeGauges) SetConnected(c bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.connected = append(g.connected, c)
}

func (g *fakeGauges) AddExpirations(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expirations += n
}

func (g *fakeGauges) ClearFenced() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fenceClears++
}

func (g *fakeGauges) SetLag(p Partition, lag int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lags[p.TP] = lag
}

func (g *fakeGauges) lagSet() map[TopicPartition]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[TopicPartition]int64, len(g.lags))
	for tp, l := range g.lags {
		out[tp] = l
	}
	return out
}

// fakeOffsets is one partition's offsets: Lag is the recorded high-water
// mark minus committed, -1 without a committed offset.
type fakeOffsets struct {
	mu        sync.Mutex
	committed int64
	hwm       int64
}

func (o *fakeOffsets) SeeHighWaterMark(hwm int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hwm = max(o.hwm, hwm)
}

func (o *fakeOffsets) Lag() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.committed < 0 {
		return -1
	}
	return o.hwm - o.committed
}

func (o *fakeOffsets) seen() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hwm
}

// fakeKafka is the owned partitions, their leaders and the leaders'
// answers. Every unexpected call fails the test through fail.
type fakeKafka struct {
	mu       sync.Mutex
	owned    []Partition
	leaders  map[TopicPartition]Broker // a partition missing here has no leader
	hwms     map[TopicPartition]int64  // a partition missing here is left out of the answer
	failing  map[Broker]bool           // brokers whose ListOffsets fails
	requests []listOffsetsRequest
	// hold, when not nil, holds every ListOffsets until it is closed or
	// the request's context ends; asked receives a token as each request
	// arrives.
	hold   chan struct{}
	asked  chan struct{}
	closed int
}

type listOffsetsRequest struct {
	broker    Broker
	tps       []TopicPartition
	cancelled bool // its context ended while it was held
}

var errNoLeader = errors.New("no leader")

func (k *fakeKafka) Owned() []Partition {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Partition(nil), k.owned...)
}

func (k *fakeKafka) Leaders(ctx context.Context, tps []TopicPartition) ([]Lookup, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]Lookup, len(tps))
	for i, tp := range tps {
		b, ok := k.leaders[tp]
		if !ok {
			out[i].Err = errNoLeader
		}
		out[i].Leader = b
	}
	return out, ctx.Err()
}

func (k *fakeKafka) HighWaterMarks(ctx context.Context, b Broker, tps []TopicPartition) (map[TopicPartition]int64, error) {
	k.mu.Lock()
	i := len(k.requests)
	k.requests = append(k.requests, listOffsetsRequest{broker: b, tps: tps})
	hold, asked := k.hold, k.asked
	k.mu.Unlock()
	if asked != nil {
		asked <- struct{}{}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			k.mu.Lock()
			k.requests[i].cancelled = true
			k.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failing[b] {
		return nil, errors.New("broker down")
	}
	out := make(map[TopicPartition]int64)
	for _, tp := range tps {
		if h, ok := k.hwms[tp]; ok {
			out[tp] = h
		}
	}
	return out, nil
}

func (k *fakeKafka) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed++
}

func (k *fakeKafka) sent() []listOffsetsRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]listOffsetsRequest(nil), k.requests...)
}

func (k *fakeKafka) closes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.closed
}

// deps are Deps over s, g and k.
func deps(s *fakeSession, g *fakeGauges, k *fakeKafka) Deps {
	return Deps{Session: s, SessionGauges: g, Owned: k, Leaders: k, Offsets: k, Lag: g, Log: discardLog}
}
