package coord

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/kazoo"
)

// fakeZooKeeper holds the group's registrations; it arms no watches (the
// loop then reads through the watch call each time).
type fakeZooKeeper struct {
	mu        sync.Mutex
	self      string
	regs      map[string]*kazoo.Registration
	registers int
}

func (z *fakeZooKeeper) Instances() ([]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	var ids []string
	for id := range z.regs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (z *fakeZooKeeper) WatchInstances() ([]string, <-chan kazoo.Event, error) {
	ids, err := z.Instances()
	return ids, nil, err
}

func (z *fakeZooKeeper) Registration(id string) (*kazoo.Registration, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if r, ok := z.regs[id]; ok {
		return r, nil
	}
	return nil, kazoo.ErrInstanceNotRegistered
}

func (z *fakeZooKeeper) WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error) {
	r, err := z.Registration(id)
	return r, nil, err
}

func (z *fakeZooKeeper) Topics() ([]string, error) { return nil, errors.New("no white list here") }
func (z *fakeZooKeeper) WatchTopics() ([]string, <-chan kazoo.Event, error) {
	return nil, nil, errors.New("no white list here")
}

func (z *fakeZooKeeper) Register() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.registers++
	z.regs[z.self] = &kazoo.Registration{Subscription: map[string]int{"t": 1}}
	return nil
}

func (z *fakeZooKeeper) Connected() bool { return true }

// fixedTopics is a topic source whose answer never changes.
type fixedTopics map[string][]topics.Partition

func (s fixedTopics) Partitions(topic string, _ topics.Leaders) ([]topics.Partition, error) {
	return s[topic], nil
}
func (s fixedTopics) Changed() <-chan struct{} { return nil }
func (s fixedTopics) Close()                   {}

// exitingWorkers is fakeWorkers whose workers can end on their own.
type exitingWorkers struct {
	fakeWorkers
	exited chan<- Worker
}

func (f *exitingWorkers) Start(tp TopicPartition, prev Worker, exited chan<- Worker) Worker {
	f.mu.Lock()
	f.exited = exited
	f.mu.Unlock()
	return f.fakeWorkers.Start(tp, prev, exited)
}

// exit ends w on its own, as a worker whose claim ended (claimEnded) or
// failed, and hands it to the loop.
func (f *exitingWorkers) exit(w *fakeWorker, claimEnded bool) {
	w.claimEnded = claimEnded
	w.end()
	f.mu.Lock()
	exited := f.exited
	f.mu.Unlock()
	exited <- w
}

func (f *exitingWorkers) startedFor(p int32) []*fakeWorker {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ws []*fakeWorker
	for _, w := range f.started {
		if w.tp.Partition == p {
			ws = append(ws, w)
		}
	}
	return ws
}

// The loop starts the assigned partitions, starts a worker that ended on
// its own again (at once after its claim ended, after the cool-down after
// a failure), registers again when its registration is gone, abandons
// every partition and registers again after a session expiry, and stops
// every partition when it is stopped.
func TestLoopRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{}}
		if err := zk.Register(); err != nil {
			t.Fatal(err)
		}
		fw := &exitingWorkers{}
		expired := make(chan struct{}, 1)
		stop := make(chan struct{})
		var reported []error
		var mu sync.Mutex
		l := New(Config{InstanceID: "b", Strategy: "range-by-id", RetryCooldown: 5 * time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
			ZooKeeper: zk,
			Topics:    fixedTopics{"t": {{ID: 0, Leader: 1}, {ID: 1, Leader: 1}}},
			Workers:   fw,
			Expired:   expired,
			Stop:      stop,
			Log:       slog.New(slog.DiscardHandler),
			Report: func(_ string, _ int32, err error) {
				mu.Lock()
				reported = append(reported, err)
				mu.Unlock()
			},
			RegistrationPath: func(id string) string { return "/consumers/g/ids/" + id },
			Metrics:          nopMetrics{},
		})
		done := make(chan struct{})
		go func() { l.Run(); close(done) }()
		synctest.Wait()
		if n0, n1 := len(fw.startedFor(0)), len(fw.startedFor(1)); n0 != 1 || n1 != 1 {
			t.Fatalf("started %d and %d workers for partitions 0 and 1, want one each", n0, n1)
		}

		// Partition 0's claim ended: it is claimed again at once.
		first := fw.startedFor(0)[0]
		fw.exit(first, true)
		synctest.Wait()
		if n := len(fw.startedFor(0)); n != 2 {
			t.Fatalf("after a lost claim: %d workers for partition 0, want a second one at once", n)
		}

		// Partition 1 failed: it waits for the cool-down.
		fw.exit(fw.startedFor(1)[0], false)
		synctest.Wait()
		if n := len(fw.startedFor(1)); n != 1 {
			t.Fatalf("partition 1 restarted during its cool-down (%d workers)", n)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(fw.startedFor(1)); n != 2 {
			t.Fatalf("partition 1 not restarted after its cool-down (%d workers)", n)
		}

		// Someone deleted the registration: the next read (the resync,
		// as no watch is armed here) registers again.
		zk.mu.Lock()
		delete(zk.regs, "b")
		zk.mu.Unlock()
		time.Sleep(resyncInterval)
		synctest.Wait()
		if zk.registers != 2 {
			t.Fatalf("registered %d times, want again after the registration was deleted", zk.registers)
		}

		// The session expired: every partition is abandoned, and the
		// instance registers again.
		running := []*fakeWorker{fw.startedFor(0)[1], fw.startedFor(1)[1]}
		expired <- struct{}{}
		synctest.Wait()
		for _, w := range running {
			if !slices.Contains(w.stops, true) {
				t.Errorf("partition %d not abandoned after the expiry: stops %v", w.tp.Partition, w.stops)
			}
		}
		if zk.registers != 3 {
			t.Errorf("registered %d times, want again after the expiry", zk.registers)
		}

		close(stop)
		<-done
		for _, w := range fw.started {
			if !w.stopped() && w != first && w != fw.startedFor(1)[0] {
				t.Errorf("a worker for partition %d was not stopped", w.tp.Partition)
			}
		}
		if len(reported) > 0 {
			t.Errorf("reported %v", reported)
		}
	})
}
