package fetch

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// The hold ends when the last first fetch out to the broker ends, or after
// Consumer.MaxWaitTime; the busy fetcher never holds, nor a runner with no
// round left.
func TestLongPollHoldEndsWithTheFirstFetchesOrMaxWaitTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Consumer.MaxWaitTime = 500 * time.Millisecond
		busy, idle := newFetchers(&env{config: &Config{Config: conf}})

		busy.own.firstFetchStarted(1)
		if !holdOver(holding(idle, 1)) {
			t.Fatal("a runner with no round left held")
		}
		busy.own.firstFetchEnded(1)
		idle.pending[1] = []*fetchWant{{topic: "t", partition: 1}} // a long poll to send
		busy.pending[1] = []*fetchWant{{topic: "t", partition: 2}}
		if !holdOver(holding(idle, 1)) {
			t.Fatal("held with no first fetch out")
		}
		busy.own.firstFetchStarted(1)
		busy.own.firstFetchStarted(1)
		if !holdOver(holding(busy, 1)) {
			t.Fatal("the busy fetcher held its round")
		}
		h := holding(idle, 1)
		if holdOver(h) {
			t.Fatal("the long poll went out while two first fetches were out")
		}
		busy.own.firstFetchEnded(1)
		if holdOver(h) {
			t.Fatal("the long poll went out while a first fetch was out")
		}
		busy.own.firstFetchEnded(1)
		if !holdOver(h) {
			t.Fatal("the long poll still held after the first fetches ended")
		}

		busy.own.firstFetchStarted(1)
		holdEndsAfter(t, holding(idle, 1), 500*time.Millisecond, "Consumer.MaxWaitTime")
		busy.own.firstFetchEnded(1)
	})
}

// The idle fetcher holds back only long polls of partitions at their log
// end: a partition a long poll's byte limit starved holds records below
// its high-water mark, and its next round goes out at once though a first
// fetch is out to the broker.
func TestStarvedIdleRoundNotHeldBehindFirstFetches(t *testing.T) {
	f, broker := starvedFetcher(t,
		starvedResponse([]int32{0}, []int32{1}), // 1 starved by the byte limit
		starvedResponse([]int32{1}, nil))
	f.env.config.Consumer.MaxWaitTime = 2 * time.Second
	f.longPoll, f.own = true, newOwnConns(f.env)
	defer f.closeConns()
	w0, w1 := queueBothPartitions(t, f)
	// A rebalance's first fetch goes out to the broker while the long poll
	// is in flight (here: before; the long poll is held, as meant).
	f.own.firstFetchStarted(broker.BrokerID())
	defer f.own.firstFetchEnded(broker.BrokerID())
	go f.run(1)
	if d := starvedAnsweredAfter(t, w0, w1); d > time.Second {
		t.Errorf("starved t/1, records below its mark, answered %v after the round that starved it: held behind the first fetch", d)
	}
}

// pollUntil polls cond (under no lock of the caller's) until it holds.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A rebalance's first fetches, answered at once, go over the own
// connection while partitions fetched already wait at their log end: the
// idle fetcher holds its long poll to the broker back until no first
// fetch is out to it. Were it sent, every later busy round would go over
// the client's connection for as long as it waits (up to
// Consumer.MaxWaitTime), and be decoded by sarama.
//
// Here first fetch A of t/0 is out (its answer held by the proxy) when
// the idle fetcher is asked for t/1, at its log end, and first fetch C of
// t/2 is asked for. C must go over the own connection after A, and the
// long poll for t/1 after C: three requests over the own connection.
func TestFirstFetchesGoOverTheOwnConnectionAheadOfLongPolls(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	res.AddError("t", 1, sarama.ErrNoError) // at its log end
	res.AddRecord("t", 2, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 2).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()).SetLeader("t", 1, broker.BrokerID()).SetLeader("t", 2, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	proxy := &relayProxy{gate: make(chan struct{})}
	defer proxy.closeAll()
	openGate := sync.OnceFunc(func() { close(proxy.gate) })
	defer openGate() // before closeAll, should the test end early
	cg := proxiedFetchGroup(t, broker, proxy)
	cg.config.Consumer.MaxWaitTime = time.Minute // only the first fetches end the hold
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	id := broker.BrokerID()

	type result struct {
		name string
		r    fetchResult
	}
	results := make(chan result, 3)
	fetch := func(name string, f *roundFetcher, partition int32, first bool) {
		results <- result{name, f.fetchUnparsed(context.Background(), "t", partition, 0, math.MaxInt, 1<<20, first)}
	}
	firsts := func() int {
		busy.own.mu.Lock()
		defer busy.own.mu.Unlock()
		if o := busy.own.firsts[id]; o != nil {
			return o.n
		}
		return 0
	}
	go fetch("A", busy, 0, true)
	pollUntil(t, "A's round on the own connection", func() bool {
		busy.own.mu.Lock()
		defer busy.own.mu.Unlock()
		c := busy.own.conns[id]
		return c != nil && c.rounds == 1
	})
	go fetch("B", idle, 1, false)
	pollUntil(t, "B queued", func() bool {
		idle.mu.Lock()
		defer idle.mu.Unlock()
		return idle.inFlight[id]
	})
	go fetch("C", busy, 2, true)
	pollUntil(t, "C counted", func() bool { return firsts() == 2 })
	openGate()
	for range 3 {
		if r := <-results; r.r.err != nil {
			t.Fatalf("fetch %s: %v", r.name, r.r.err)
		}
	}
	busy.own.mu.Lock()
	c := busy.own.conns[id]
	busy.own.mu.Unlock()
	c.fetch.mu.Lock()
	requests := c.fetch.correlation
	c.fetch.mu.Unlock()
	if requests != 3 {
		t.Errorf("%d requests over the own connection, want 3: first fetch C went over the client's connection while the long poll for t/1 held the own one", requests)
	}
}

// queueBothPartitions queues a want of t/0 and of t/1 to f's broker 1
// (starvedFetcher's), as one round of a loop marked running, not started:
// the caller runs f.run(1).
func queueBothPartitions(t *testing.T, f *roundFetcher) (w0, w1 *fetchWant) {
	t.Helper()
	leader, err := f.env.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	w0 = &fetchWant{ctx: context.Background(), topic: "t", partition: 0, size: 1 << 20, limit: 100, done: make(chan fetchResult, 1)}
	w1 = &fetchWant{ctx: context.Background(), topic: "t", partition: 1, size: 1 << 20, limit: 100, done: make(chan fetchResult, 1)}
	f.mu.Lock()
	f.pending[1] = []*fetchWant{w0, w1}
	f.leaders[1] = leader
	f.inFlight[1] = true
	f.mu.Unlock()
	return w0, w1
}

// starvedAnsweredAfter waits for the answers of w0 and w1, one message
// each, and returns how long after w0's (the round that starved w1)
// w1's came.
func starvedAnsweredAfter(t *testing.T, w0, w1 *fetchWant) time.Duration {
	t.Helper()
	if r := <-w0.done; r.err != nil || r.messages() != 1 {
		t.Fatalf("t/0: %d messages, err %v", r.messages(), r.err)
	}
	fed := time.Now()
	if r := <-w1.done; r.err != nil || r.messages() != 1 {
		t.Fatalf("t/1: %d messages, err %v", r.messages(), r.err)
	}
	return time.Since(fed)
}

// While a partition is expected to open (claimed, its offset read, its
// first fetch next: Engine.ExpectOpen), the idle fetcher holds its long
// polls back as it does for a first fetch out: otherwise a long poll sent
// between two claim batches of a rebalance holds the own connection, and
// the next batch's first fetches go over the client's. The hold ends once
// none is expected and no first fetch is out, after Consumer.MaxWaitTime,
// or once an expectation has stood for expectedOpenFor.
func TestLongPollHeldWhilePartitionsAreExpectedToOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Consumer.MaxWaitTime = 500 * time.Millisecond
		busy, idle := newFetchers(&env{config: &Config{Config: conf}})
		e := &Engine{busy: busy, idle: idle}
		idle.pending[1] = []*fetchWant{{topic: "t", partition: 1}} // a long poll to send

		a, b := e.ExpectOpen(), e.ExpectOpen()
		h := holding(idle, 1)
		if holdOver(h) {
			t.Fatal("the long poll went out while two partitions were expected to open")
		}
		a()
		a() // a second call ends nothing more
		if holdOver(h) {
			t.Fatal("the long poll went out while a partition was expected to open")
		}
		busy.own.firstFetchStarted(1) // b's first fetch, out before b opened
		b()
		if holdOver(h) {
			t.Fatal("the long poll went out while a first fetch was out")
		}
		busy.own.firstFetchEnded(1)
		if !holdOver(h) {
			t.Fatal("the long poll still held with nothing expected and no first fetch out")
		}

		c := e.ExpectOpen()
		holdEndsAfter(t, holding(idle, 1), 500*time.Millisecond, "Consumer.MaxWaitTime")

		conf.Consumer.MaxWaitTime = 5 * time.Second
		// c has stood 500 ms: it holds the next for the rest of its second
		holdEndsAfter(t, holding(idle, 1), expectedOpenFor-500*time.Millisecond, "c's expectedOpenFor ended")
		c() // after its expiry: ends nothing more
		d := e.ExpectOpen()
		if holdOver(holding(idle, 1)) {
			t.Fatal("an expectation ended twice: a new one no longer holds")
		}
		d()
	})
}

// Partitions expected to open one after another (workers started a little
// apart, none of them opening) keep some expectation outstanding all the
// time: they hold one long poll expectedOpenFor at most, not
// Consumer.MaxWaitTime.
func TestLongPollHeldByOverlappingExpectationsForExpectedOpenForAtMost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Consumer.MaxWaitTime = 10 * time.Second
		busy, idle := newFetchers(&env{config: &Config{Config: conf}})
		e := &Engine{busy: busy, idle: idle}
		idle.pending[1] = []*fetchWant{{topic: "t", partition: 1}}
		stop := make(chan struct{})
		e.ExpectOpen()
		go func() { // a worker starts, and never opens, every 900 ms
			for {
				select {
				case <-time.After(900 * time.Millisecond):
					e.ExpectOpen()
				case <-stop:
					return
				}
			}
		}()
		start := time.Now()
		idle.holdLongPoll(1)
		close(stop)
		if d := time.Since(start); d != expectedOpenFor {
			t.Errorf("overlapping expectations held a long poll %v, want expectedOpenFor (%v)", d, expectedOpenFor)
		}
	})
}

// blockingLeader is a Client whose Leader waits until released: a
// metadata refresh, or the feed's goroutine not scheduled yet.
type blockingLeader struct{ release chan struct{} }

func (c blockingLeader) Leader(string, int32) (*sarama.Broker, error) {
	<-c.release
	return nil, sarama.ErrLeaderNotAvailable
}
func (blockingLeader) RefreshMetadata(...string) error { return nil }

// A worker ends its expectation as soon as Open returns, but a batch
// feed counts its first fetch as out only once its goroutine has looked
// the leader up. The feed's own expectation covers the time between, until
// its first fetch is answered, so no long poll goes out there.
func TestLongPollHeldFromOpenUntilTheFeedsFirstFetchIsAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Version = sarama.V2_1_0_0
		conf.Consumer.MaxWaitTime = 500 * time.Millisecond
		client := blockingLeader{release: make(chan struct{})}
		e := NewEngine(Config{Config: conf, Batches: true}, Deps{Client: client})
		e.idle.pending[1] = []*fetchWant{{topic: "t", partition: 1}}
		opened := e.ExpectOpen() // the worker's, from its start
		done := make(chan struct{})
		go func() { e.idle.holdLongPoll(1); close(done) }()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src, err := e.Partition(ctx, "t", 0, nil, nil).Open(10)
		if err != nil {
			t.Fatal(err)
		}
		opened() // the worker's markOpened, right after Open
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the long poll went out before the just-opened partition's first fetch was counted")
		default:
		}
		close(client.release) // the first fetch fails: answered
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Error("the long poll still held after the feed's first fetch was answered")
		}
		cancel()
		_ = src.Close()
		<-done
	})
}

// Only a partition's first Open is a rebalance's: a Source opened again (a
// seek, a pause, a fallback) expects nothing, and holds no long poll to
// another broker while its first fetch looks its leader up.
func TestReopenedPartitionHoldsNoLongPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Version = sarama.V2_1_0_0
		conf.Consumer.MaxWaitTime = 500 * time.Millisecond
		client := &switchedLeader{release: make(chan struct{})}
		close(client.release) // the first Open's lookups answer at once
		e := NewEngine(Config{Config: conf, Batches: true}, Deps{Client: client})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := e.Partition(ctx, "t", 0, nil, nil)
		first, err := p.Open(10)
		if err != nil {
			t.Fatal(err)
		}
		_ = first.Close() // a seek, say
		release := client.block()
		src, err := p.Open(20)
		if err != nil {
			t.Fatal(err)
		}
		e.idle.pending[2] = []*fetchWant{{topic: "u", partition: 1}} // a long poll to another broker
		done := make(chan struct{})
		go func() { e.idle.holdLongPoll(2); close(done) }()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Error("a reopened partition's feed held a long poll to another broker")
		}
		close(release)
		cancel()
		_ = src.Close()
		<-done
	})
}

// switchedLeader is a Client whose Leader fails, at once or, after block,
// once released.
type switchedLeader struct {
	mu      sync.Mutex
	release chan struct{}
}

func (c *switchedLeader) block() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release = make(chan struct{})
	return c.release
}

func (c *switchedLeader) Leader(string, int32) (*sarama.Broker, error) {
	c.mu.Lock()
	release := c.release
	c.mu.Unlock()
	<-release
	return nil, sarama.ErrLeaderNotAvailable
}
func (*switchedLeader) RefreshMetadata(...string) error { return nil }

// A worker whose group has no Engine (a nil *Engine in its Fetch, as some
// of the group's tests build it) expects nothing and does not panic.
func TestNilEngineExpectsNothing(t *testing.T) {
	var e *Engine
	e.ExpectOpen()()
}

// holding runs f's hold of its next long poll to broker id in a goroutine,
// and returns a channel closed when the hold ends.
func holding(f *roundFetcher, id int32) chan struct{} {
	done := make(chan struct{})
	go func() { f.holdLongPoll(id); close(done) }()
	return done
}

// holdOver waits until every goroutine of the bubble is blocked, and says
// whether the hold that closes done has ended.
func holdOver(done chan struct{}) bool {
	synctest.Wait()
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// holdEndsAfter checks, in a bubble, that the hold closing done ends d
// from now, not before; bound names d in the failure.
func holdEndsAfter(t *testing.T, done chan struct{}, d time.Duration, bound string) {
	t.Helper()
	time.Sleep(d - time.Millisecond)
	if holdOver(done) {
		t.Fatalf("the hold ended before %s", bound)
	}
	time.Sleep(time.Millisecond)
	if !holdOver(done) {
		t.Fatalf("held longer than %s", bound)
	}
}
