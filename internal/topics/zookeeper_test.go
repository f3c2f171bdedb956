package topics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/zkgroup/kafka/kazoo"
)

// fakeZooKeeper is a scripted ZooKeeper: topics and leaders the test sets,
// a log of every call (which each test checks in full, so an unexpected
// read fails it), and the watch channels handed out, which the test fires.
type fakeZooKeeper struct {
	mu      sync.Mutex
	parts   map[string][]int32 // by topic; absent: no such topic
	leaders map[string]int32   // by "topic/partition"; absent: no state node
	bad     map[string]error   // a node's read error, by "topic" or "topic/partition"
	gen     uint64
	calls   []string
	watches map[string]chan kazoo.Event // the last watch per node
	open    map[chan kazoo.Event]bool   // every watch not fired
}

func newFakeZooKeeper() *fakeZooKeeper {
	return &fakeZooKeeper{parts: map[string][]int32{}, leaders: map[string]int32{}, bad: map[string]error{},
		gen: 1, watches: map[string]chan kazoo.Event{}, open: map[chan kazoo.Event]bool{}}
}

func (f *fakeZooKeeper) log(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

// took returns the calls since the last took, sorted (leader reads run
// concurrently).
func (f *fakeZooKeeper) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.calls
	f.calls = nil
	slices.Sort(calls)
	return calls
}

func (f *fakeZooKeeper) watch(node string) <-chan kazoo.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan kazoo.Event, 1)
	f.watches[node] = ch
	f.open[ch] = true
	return ch
}

// fire fires node's watch.
func (f *fakeZooKeeper) fire(t *testing.T, node string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.watches[node]
	if !ok {
		t.Fatalf("no watch on %s", node)
	}
	ch <- kazoo.Event{Type: kazoo.EventNodeDataChanged}
	close(ch)
	delete(f.watches, node)
	delete(f.open, ch)
}

// closeAll closes every watch not fired, as closing the connection does.
func (f *fakeZooKeeper) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.open {
		close(ch)
	}
	clear(f.open)
	clear(f.watches)
}

func (f *fakeZooKeeper) readParts(topic string) ([]int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.bad[topic]; err != nil {
		return nil, err
	}
	ids, ok := f.parts[topic]
	if !ok {
		return nil, fmt.Errorf("get /brokers/topics/%s: %w", topic, kazoo.ErrNoNode)
	}
	return slices.Clone(ids), nil
}

func (f *fakeZooKeeper) readLeader(topic string, p int32) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := fmt.Sprintf("%s/%d", topic, p)
	if err := f.bad[key]; err != nil {
		return -1, err
	}
	l, ok := f.leaders[key]
	if !ok {
		return -1, fmt.Errorf("get %s state: %w", key, kazoo.ErrNoNode)
	}
	return l, nil
}

func (f *fakeZooKeeper) Partitions(topic string) ([]int32, error) {
	f.log("Partitions " + topic)
	return f.readParts(topic)
}

func (f *fakeZooKeeper) WatchPartitions(topic string) ([]int32, <-chan kazoo.Event, error) {
	f.log("WatchPartitions " + topic)
	ids, err := f.readParts(topic)
	if errors.Is(err, kazoo.ErrNoNode) {
		return nil, nil, err // no node, no watch: as GetW
	}
	return ids, f.watch(topic), err
}

func (f *fakeZooKeeper) Leader(topic string, p int32) (int32, error) {
	f.log(fmt.Sprintf("Leader %s/%d", topic, p))
	return f.readLeader(topic, p)
}

func (f *fakeZooKeeper) WatchLeader(topic string, p int32) (int32, <-chan kazoo.Event, error) {
	f.log(fmt.Sprintf("WatchLeader %s/%d", topic, p))
	l, err := f.readLeader(topic, p)
	if errors.Is(err, kazoo.ErrNoNode) {
		return -1, nil, err
	}
	return l, f.watch(fmt.Sprintf("%s/%d", topic, p)), err
}

func (f *fakeZooKeeper) WatchTopics() (<-chan kazoo.Event, error) {
	f.log("WatchTopics")
	return f.watch("topics"), nil
}

func (f *fakeZooKeeper) Generation() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

func (f *fakeZooKeeper) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func changed(s Source) bool {
	select {
	case <-s.Changed():
		return true
	default:
		return false
	}
}

func checkCalls(t *testing.T, f *fakeZooKeeper, what string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := f.took(); !slices.Equal(got, want) {
		t.Fatalf("%s: calls %q, want %q", what, got, want)
	}
}

func checkParts(t *testing.T, s Source, topic string, want ...Partition) {
	t.Helper()
	got, err := s.Partitions(topic, Leaders{All: true})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Partitions(%s) = %v, %v; want %v", topic, got, err, want)
	}
}

// Each node is watched once; while its watch is armed, neither the
// assignment nor a leader is read again. A watch that
// fires wakes Changed and is armed again by the next read.
func TestZooKeeperSourceWatchesEachNodeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"] = []int32{0, 1}
		f.leaders["a/0"], f.leaders["a/1"] = 3, 4
		z := NewZooKeeper(f, true)

		checkParts(t, z, "a", Partition{0, 3}, Partition{1, 4})
		checkCalls(t, f, "first view", "WatchPartitions a", "WatchLeader a/0", "WatchLeader a/1")
		synctest.Wait()
		if changed(z) {
			t.Fatal("changed before any watch fired")
		}

		checkParts(t, z, "a", Partition{0, 3}, Partition{1, 4})
		checkCalls(t, f, "second view")

		f.set(func() { f.leaders["a/1"] = 5 })
		f.fire(t, "a/1")
		synctest.Wait()
		if !changed(z) {
			t.Fatal("a leader's watch fired without a wake-up")
		}
		checkParts(t, z, "a", Partition{0, 3}, Partition{1, 5})
		checkCalls(t, f, "after the leader moved", "WatchLeader a/1")

		f.set(func() { f.parts["a"] = []int32{0, 1, 2}; f.leaders["a/2"] = 3 })
		f.fire(t, "a")
		synctest.Wait()
		if !changed(z) {
			t.Fatal("the assignment's watch fired without a wake-up")
		}
		checkParts(t, z, "a", Partition{0, 3}, Partition{1, 5}, Partition{2, 3})
		checkCalls(t, f, "after a partition was added", "WatchPartitions a", "WatchLeader a/2")
	})
}

// Without leaders, no state node is read or watched.
func TestZooKeeperSourceWithoutLeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"] = []int32{0, 1}
		z := NewZooKeeper(f, false)
		checkParts(t, z, "a", Partition{0, -1}, Partition{1, -1})
		checkCalls(t, f, "view", "WatchPartitions a")
	})
}

// A missing topic is a *MissingTopicError wrapping kazoo.ErrNoNode, and
// the topic list is watched (once) so its creation wakes Changed.
func TestZooKeeperSourceMissingTopic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		z := NewZooKeeper(f, true)
		for i := range 2 {
			_, err := z.Partitions("new", Leaders{All: true})
			var mt *MissingTopicError
			if !errors.As(err, &mt) || !errors.Is(err, kazoo.ErrNoNode) {
				t.Fatalf("read %d: want a missing topic wrapping ErrNoNode, got %v", i, err)
			}
		}
		checkCalls(t, f, "two reads", "WatchPartitions new", "WatchPartitions new", "WatchTopics")

		f.set(func() { f.parts["new"] = []int32{0}; f.leaders["new/0"] = 1 })
		f.fire(t, "topics")
		synctest.Wait()
		if !changed(z) {
			t.Fatal("the topic list's watch fired without a wake-up")
		}
		checkParts(t, z, "new", Partition{0, 1})
		checkCalls(t, f, "created", "WatchPartitions new", "WatchLeader new/0")
	})
}

// A partition without a state node has no leader (-1); any other failure
// of a leader read fails the view, naming the partition, and the next view
// reads again.
func TestZooKeeperSourceLeaderErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"] = []int32{0, 1}
		f.leaders["a/0"] = 2
		z := NewZooKeeper(f, true)
		checkParts(t, z, "a", Partition{0, 2}, Partition{1, -1})
		checkCalls(t, f, "no state for a/1", "WatchPartitions a", "WatchLeader a/0", "WatchLeader a/1")

		f.set(func() { f.bad["a/1"] = kazoo.ErrMalformed })
		_, err := z.Partitions("a", Leaders{All: true})
		if !errors.Is(err, kazoo.ErrMalformed) || err.Error() != "leader of a/1: "+kazoo.ErrMalformed.Error() {
			t.Fatalf("got %v, want the leader error of a/1", err)
		}
		checkCalls(t, f, "a/1 unreadable", "WatchLeader a/1")

		// The failed read armed a watch: a fix fires it.
		f.set(func() { delete(f.bad, "a/1"); f.leaders["a/1"] = 2 })
		f.fire(t, "a/1")
		synctest.Wait()
		if !changed(z) {
			t.Fatal("fixing the state node did not wake")
		}
		checkParts(t, z, "a", Partition{0, 2}, Partition{1, 2})
		checkCalls(t, f, "fixed", "WatchLeader a/1")
	})
}

// A replaced session's watches are gone: the next read arms new ones
// rather than trusting the old set, and drops the leaders read with them.
func TestZooKeeperSourceNewSessionWatchesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"] = []int32{0}
		f.leaders["a/0"] = 1
		z := NewZooKeeper(f, true)
		checkParts(t, z, "a", Partition{0, 1})
		checkCalls(t, f, "first session", "WatchPartitions a", "WatchLeader a/0")

		f.set(func() { f.gen++; f.leaders["a/0"] = 2 })
		checkParts(t, z, "a", Partition{0, 2})
		checkCalls(t, f, "second session", "WatchPartitions a", "WatchLeader a/0")
	})
}

// A view that asks for no leader (an all-sticky group) reads no state node
// and marks every leader LeaderNotRead; one that asks for some reads and
// watches only theirs; All reads the rest, not those already known.
func TestZooKeeperSourceReadsOnlyTheLeadersAskedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"] = []int32{0, 1, 2}
		f.leaders["a/0"], f.leaders["a/1"], f.leaders["a/2"] = 3, 4, 5
		z := NewZooKeeper(f, true)

		got, err := z.Partitions("a", Leaders{})
		if want := []Partition{{0, LeaderNotRead}, {1, LeaderNotRead}, {2, LeaderNotRead}}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("no leaders asked for: %v, %v; want %v", got, err, want)
		}
		checkCalls(t, f, "no leaders asked for", "WatchPartitions a")

		got, err = z.Partitions("a", Leaders{Of: func(id int32) bool { return id == 1 }})
		if want := []Partition{{0, LeaderNotRead}, {1, 4}, {2, LeaderNotRead}}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("the leader of 1 asked for: %v, %v; want %v", got, err, want)
		}
		checkCalls(t, f, "the leader of 1 asked for", "WatchLeader a/1")

		checkParts(t, z, "a", Partition{0, 3}, Partition{1, 4}, Partition{2, 5})
		checkCalls(t, f, "all asked for", "WatchLeader a/0", "WatchLeader a/2")
	})
}

// Close ends the goroutines waiting on the source's watches, those of an
// earlier session too, though ZooKeeper never closes their channels
// (go-zookeeper's loop can block before it does); a read abandoned by
// Close that arms a watch afterwards leaves none waiting either. synctest
// fails the test if any goroutine of the bubble is left.
func TestZooKeeperSourceCloseEndsItsWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper() // its watches are never closed
		f.parts["a"] = []int32{0}
		f.leaders["a/0"] = 1
		z := NewZooKeeper(f, true)
		checkParts(t, z, "a", Partition{0, 1})
		f.set(func() { f.gen++ })
		checkParts(t, z, "a", Partition{0, 1})
		z.Close()
		f.set(func() { f.gen++ })
		checkParts(t, z, "a", Partition{0, 1})
		checkCalls(t, f, "three sessions", "WatchLeader a/0", "WatchLeader a/0", "WatchLeader a/0",
			"WatchPartitions a", "WatchPartitions a", "WatchPartitions a")
	})
}

// pausedGeneration is a fakeZooKeeper whose next Generation, once pause
// is set, returns the generation it read only after release is closed:
// a read that began before the session was replaced and reaches the
// source's lock after one that began after it.
type pausedGeneration struct {
	*fakeZooKeeper
	pause   bool
	reached chan struct{}
	release chan struct{}
}

func (p *pausedGeneration) Generation() uint64 {
	g := p.fakeZooKeeper.Generation()
	p.mu.Lock()
	pause := p.pause
	p.pause = false
	p.mu.Unlock()
	if pause {
		close(p.reached)
		<-p.release
	}
	return g
}

// A read that learned the generation before the session was replaced, and
// reaches the watch set after a read of the new session, does not replace
// the new session's set: its watches still wake Changed. (The loop's
// readGainedLeaders runs beside its view.)
func TestZooKeeperSourceAStaleGenerationKeepsTheCurrentWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeZooKeeper()
		defer f.closeAll()
		f.parts["a"], f.parts["b"] = []int32{0}, []int32{0}
		f.leaders["a/0"], f.leaders["b/0"] = 1, 1
		p := &pausedGeneration{fakeZooKeeper: f, pause: true, reached: make(chan struct{}), release: make(chan struct{})}
		z := NewZooKeeper(p, true)

		stale := make(chan error, 1)
		go func() { // learns generation 1, then waits
			_, err := z.Partitions("b", Leaders{All: true})
			stale <- err
		}()
		<-p.reached
		f.set(func() { f.gen++ }) // the session is replaced
		checkParts(t, z, "a", Partition{0, 1})
		close(p.release)
		if err := <-stale; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for changed(z) {
		}

		f.set(func() { f.leaders["a/0"] = 2 })
		f.fire(t, "a/0")
		synctest.Wait()
		if !changed(z) {
			t.Fatal("the new session's watch on a/0 fired without a wake-up: a read of the old generation closed its set")
		}
	})
}
