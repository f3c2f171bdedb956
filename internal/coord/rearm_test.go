package coord

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/kazoo"
)

// watchingZooKeeper is a fake ZooKeeper whose Watch calls arm real one-shot
// watches, fired by the test as ZooKeeper fires them on a change. It counts
// the reads made without a watch, so a test can tell an armed watch from a
// lost one.
type watchingZooKeeper struct {
	mu      sync.Mutex
	regs    map[string]*kazoo.Registration
	topics  []string
	watches map[string][]chan kazoo.Event // outstanding, by key ("ids", "registration/<id>", "topics")
	armed   map[string]int                // watches armed so far, by key
	regRead map[string]int                // reads of each registration, with a watch or without
}

func newWatchingZooKeeper() *watchingZooKeeper {
	return &watchingZooKeeper{regs: map[string]*kazoo.Registration{}, watches: map[string][]chan kazoo.Event{}, armed: map[string]int{},
		regRead: map[string]int{}}
}

func (z *watchingZooKeeper) watch(key string) <-chan kazoo.Event {
	ch := make(chan kazoo.Event, 1)
	z.watches[key] = append(z.watches[key], ch)
	z.armed[key]++
	return ch
}

// fire fires every outstanding watch on key, as a change of its node does.
func (z *watchingZooKeeper) fire(key string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, ch := range z.watches[key] {
		ch <- kazoo.Event{Type: kazoo.EventNodeChildrenChanged}
		close(ch)
	}
	delete(z.watches, key)
}

// expire ends every outstanding watch, as a session's end does.
func (z *watchingZooKeeper) expire() {
	z.mu.Lock()
	defer z.mu.Unlock()
	for key, chs := range z.watches {
		for _, ch := range chs {
			close(ch)
		}
		delete(z.watches, key)
	}
}

func (z *watchingZooKeeper) regReads(id string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.regRead[id]
}

func (z *watchingZooKeeper) armedCount(key string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.armed[key]
}

func (z *watchingZooKeeper) ids() []string {
	var ids []string
	for id := range z.regs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (z *watchingZooKeeper) Instances() ([]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.ids(), nil
}

func (z *watchingZooKeeper) WatchInstances() ([]string, <-chan kazoo.Event, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.ids(), z.watch("ids"), nil
}

func (z *watchingZooKeeper) Registration(id string) (*kazoo.Registration, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.regRead[id]++
	if r, ok := z.regs[id]; ok {
		return r, nil
	}
	return nil, kazoo.ErrInstanceNotRegistered
}

func (z *watchingZooKeeper) WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.regRead[id]++
	r, ok := z.regs[id]
	if !ok {
		return nil, nil, kazoo.ErrInstanceNotRegistered
	}
	return r, z.watch("registration/" + id), nil
}

func (z *watchingZooKeeper) Topics() ([]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.topics), nil
}

func (z *watchingZooKeeper) WatchTopics() ([]string, <-chan kazoo.Event, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.topics), z.watch("topics"), nil
}

func (z *watchingZooKeeper) Register() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.regs["b"] = &kazoo.Registration{Pattern: kazoo.RegPatternWhiteList, Subscription: map[string]int{"t.*": 1}}
	return nil
}

func (z *watchingZooKeeper) Connected() bool { return true }

func (z *watchingZooKeeper) set(id string, reg *kazoo.Registration) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if reg == nil {
		delete(z.regs, id)
	} else {
		z.regs[id] = reg
	}
}

// mutableTopics is a topic source whose partitions the test changes.
type mutableTopics struct {
	mu    sync.Mutex
	parts map[string][]topics.Partition
	wake  chan struct{}
}

func (s *mutableTopics) Partitions(topic string, _ topics.Leaders) ([]topics.Partition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.parts[topic]), nil
}
func (s *mutableTopics) Changed() <-chan struct{} { return s.wake }
func (s *mutableTopics) Close()                   {}

// running lists the topic/partitions of the started workers not stopped.
func running(fw *fakeWorkers) []string {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	var out []string
	for _, w := range fw.started {
		if !w.stopped() {
			out = append(out, sortedTPs([]TopicPartition{w.tp})[0])
		}
	}
	slices.Sort(out)
	return out
}

// Every change the loop watches in ZooKeeper (a join or leave, a changed
// registration, a new topic a white list covers) reaches the assignment at
// once, without waiting for the resync, again and again (each watch is
// armed anew after it fired), and after a session expiry through the new
// session's watches.
func TestLoopRearmsWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := newWatchingZooKeeper()
		zk.topics = []string{"t"}
		_ = zk.Register()
		wl, err := assign.NewWhiteList("t.*")
		if err != nil {
			t.Fatal(err)
		}
		src := &mutableTopics{parts: map[string][]topics.Partition{
			"t":  {{ID: 0}, {ID: 1}},
			"t2": {{ID: 0}, {ID: 1}},
		}, wake: make(chan struct{}, 1)}
		fw := &fakeWorkers{}
		expired := make(chan struct{}, 1)
		stop, done := startLoop(t, Config{WhiteList: wl}, Deps{ZooKeeper: zk, Topics: src, Workers: fw, Expired: expired})
		synctest.Wait()

		want := func(step string, tps ...string) {
			t.Helper()
			wantRunning(t, fw, step, tps...)
		}
		static := func(topics ...string) *kazoo.Registration {
			sub := map[string]int{}
			for _, t := range topics {
				sub[t] = 1
			}
			return &kazoo.Registration{Subscription: sub}
		}
		want("alone", "t/0", "t/1")

		for round := range 3 { // each watch fires more than once
			zk.set("a", static("t")) // a joins: sorted first, it takes t/0
			zk.fire("ids")
			want("a joined", "t/1")

			zk.set("a", static("x")) // a's subscription changes: t is b's alone
			zk.fire("registration/a")
			want("a left t", "t/0", "t/1")

			zk.set("a", nil) // a leaves
			zk.fire("registration/a")
			zk.fire("ids")
			want("a left", "t/0", "t/1")
			if n := zk.armedCount("ids"); n != 2*(round+1)+1 {
				t.Fatalf("round %d: the instance list was watched %d times, want %d", round, n, 2*(round+1)+1)
			}
		}

		zk.mu.Lock()
		zk.topics = []string{"t", "t2"} // a topic the white list covers appears
		zk.mu.Unlock()
		zk.fire("topics")
		want("t2 created", "t/0", "t/1", "t2/0", "t2/1")

		// The session expired: every partition is abandoned, the old
		// watches end with the session, and the new session's watches
		// carry the next change.
		zk.expire()
		expired <- struct{}{}
		synctest.Wait()
		want("after the expiry", "t/0", "t/1", "t2/0", "t2/1")
		zk.set("a", static("t", "t2"))
		zk.fire("ids")
		want("a joined after the expiry", "t/1", "t2/1")

		close(stop)
		<-done
		zk.expire()
		synctest.Wait()
	})
}

// heldWorkers are fakeWorkers whose workers do not end when stopped: the
// test ends them, as a worker ends after its drain, commit and release.
type heldWorkers struct {
	exitingWorkers
}

type heldWorker struct{ *fakeWorker }

func (w heldWorker) Stop(abandon bool) {
	w.mu.Lock()
	w.stops = append(w.stops, abandon)
	w.mu.Unlock()
}

func (f *heldWorkers) Start(tp TopicPartition, prev Worker, exited chan<- Worker) Worker {
	return heldWorker{f.exitingWorkers.Start(tp, prev, exited).(*fakeWorker)}
}

// exit is exitingWorkers.exit for the held worker the loop knows.
func (f *heldWorkers) exit(w *fakeWorker, claimEnded bool) {
	w.claimEnded = claimEnded
	w.end()
	f.mu.Lock()
	exited := f.exited
	f.mu.Unlock()
	exited <- heldWorker{w}
}

// A worker that ended holding an owner node is swept before the partition
// is claimed again here (its successor waits for the sweep), and a worker
// that ends holding one after it was stopped is swept as soon as it tells
// the loop (SweepWake), not at the next resync.
func TestLoopSweepsBeforeRestartAndOnWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{}}
		_ = zk.Register()
		fw := &heldWorkers{}
		sweepWake := make(chan struct{}, 1)
		stop, done := startLoop(t, Config{RetryCooldown: 5 * time.Second, Topics: []string{"t"}}, Deps{
			ZooKeeper: zk,
			Topics:    fixedTopics{"t": {{ID: 0}, {ID: 1}}},
			Workers:   fw,
			SweepWake: sweepWake,
		})
		synctest.Wait()
		swept := func() []*fakeWorker {
			fw.mu.Lock()
			defer fw.mu.Unlock()
			return slices.Clone(fw.swept)
		}

		// Partition 1's claim ended, and its worker may have left a node.
		first := fw.startedFor(1)[0]
		first.mayHoldNode = true
		fw.exit(first, true)
		synctest.Wait()
		ws := fw.startedFor(1)
		if len(ws) != 2 || len(swept()) != 1 || swept()[0].tp.Partition != 1 {
			t.Fatalf("after partition 1 ended holding a node: %d workers, sweeps %v; want a sweep and a second worker", len(ws), swept())
		}
		if ws[1].prev != Worker(swept()[0]) {
			t.Fatalf("partition 1's new worker waits for %v, not for the sweep", ws[1].prev)
		}

		// a joins and takes partition 0 (at the resync: this fake arms no
		// watch); b's worker for it is stopped but drains on.
		zk.mu.Lock()
		zk.regs["a"] = &kazoo.Registration{Subscription: map[string]int{"t": 1}}
		zk.mu.Unlock()
		time.Sleep(resyncInterval)
		synctest.Wait()
		w0 := fw.startedFor(0)[0]
		if !w0.stopped() {
			t.Fatal("partition 0 was not stopped when a took it")
		}
		// It ends holding a node and says so: the sweep starts at once.
		w0.mayHoldNode = true
		w0.end()
		sweepWake <- struct{}{}
		synctest.Wait()
		if s := swept(); len(s) != 2 || s[1].tp.Partition != 0 {
			t.Fatalf("sweeps %v after partition 0's worker ended holding a node, want one for it at once", s)
		}

		close(stop)
		for _, w := range fw.startedFor(1) {
			w.end()
		}
		<-done
	})
}

// The loop's watch goroutines end with the loop, and those of a session
// with its expiry, also when ZooKeeper never closes their channels:
// go-zookeeper's loop can block before it does. synctest fails the test
// if any goroutine of the bubble is left waiting.
func TestLoopEndsItsWatchesThoughTheirChannelsStayOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := newWatchingZooKeeper()
		zk.topics = []string{"t"}
		_ = zk.Register()
		wl, err := assign.NewWhiteList("t.*")
		if err != nil {
			t.Fatal(err)
		}
		src := &mutableTopics{parts: map[string][]topics.Partition{"t": {{ID: 0}}}, wake: make(chan struct{}, 1)}
		fw := &fakeWorkers{}
		expired := make(chan struct{}, 1)
		stop, done := startLoop(t, Config{WhiteList: wl}, Deps{ZooKeeper: zk, Topics: src, Workers: fw, Expired: expired})
		wantRunning(t, fw, "started", "t/0")
		if zk.armedCount("ids") != 1 {
			t.Fatalf("the instance list was watched %d times, want 1", zk.armedCount("ids"))
		}
		expired <- struct{}{} // the first session's watches never end
		wantRunning(t, fw, "after the expiry", "t/0")
		if zk.armedCount("ids") != 2 {
			t.Fatalf("after the expiry the instance list was watched %d times, want 2", zk.armedCount("ids"))
		}
		close(stop)
		<-done
	})
}
