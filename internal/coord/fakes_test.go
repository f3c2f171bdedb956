package coord

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
)

// fakeWorker is a Worker that ends at once when stopped (and, as a real
// worker does, closes Claimed and Opened then if it never got there).
type fakeWorker struct {
	tp          TopicPartition
	prev        Worker
	done        chan struct{}
	claimed     chan struct{}
	opened      chan struct{}
	mayHoldNode bool
	claimEnded  bool

	mu      sync.Mutex
	stops   []bool // the abandon argument of each Stop
	endOnce sync.Once
}

func newFakeWorker(tp TopicPartition, prev Worker) *fakeWorker {
	return &fakeWorker{tp: tp, prev: prev, done: make(chan struct{}), claimed: make(chan struct{}), opened: make(chan struct{})}
}

func (w *fakeWorker) Partition() TopicPartition { return w.tp }
func (w *fakeWorker) Done() <-chan struct{}     { return w.done }
func (w *fakeWorker) Claimed() <-chan struct{}  { return w.claimed }
func (w *fakeWorker) Opened() <-chan struct{}   { return w.opened }
func (w *fakeWorker) MayHoldNode() bool         { return w.mayHoldNode }
func (w *fakeWorker) ClaimEnded() bool          { return w.claimEnded }

func (w *fakeWorker) Stop(abandon bool) {
	w.mu.Lock()
	w.stops = append(w.stops, abandon)
	w.mu.Unlock()
	w.end()
}

func (w *fakeWorker) end() {
	w.endOnce.Do(func() {
		for _, c := range []chan struct{}{w.claimed, w.opened} {
			select {
			case <-c:
			default:
				close(c)
			}
		}
		close(w.done)
	})
}

func (w *fakeWorker) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.stops) > 0
}

// fakeWorkers records the workers and sweepers the loop starts.
type fakeWorkers struct {
	// holdNodes makes every worker end as one whose release failed for
	// good (MayHoldNode), and failSweeps the first so many sweeps too.
	holdNodes  bool
	failSweeps int

	mu      sync.Mutex
	started []*fakeWorker
	swept   []*fakeWorker
}

func (f *fakeWorkers) Start(tp TopicPartition, prev Worker, _ chan<- Worker) Worker {
	w := newFakeWorker(tp, prev)
	w.mayHoldNode = f.holdNodes
	f.mu.Lock()
	f.started = append(f.started, w)
	f.mu.Unlock()
	return w
}

func (f *fakeWorkers) SweepOwnerNode(tp TopicPartition) Worker {
	w := newFakeWorker(tp, nil)
	w.end() // a sweep here is done at once
	f.mu.Lock()
	if f.failSweeps > 0 {
		f.failSweeps--
		w.mayHoldNode = true
	}
	f.swept = append(f.swept, w)
	f.mu.Unlock()
	return w
}

type nopMetrics struct{}

func (nopMetrics) Owned(int)                   {}
func (nopMetrics) Rebalanced()                 {}
func (nopMetrics) RebalanceTook(time.Duration) {}

// testLoop is a loop for instance id over workers, reporting to t.
func testLoop(t *testing.T, id string, workers Workers) *Loop {
	return New(Config{InstanceID: id, Strategy: "range-by-id", RetryCooldown: time.Second}, Deps{
		Workers: workers,
		Log:     slog.New(slog.DiscardHandler),
		Report:  func(topic string, partition int32, err error) { t.Errorf("reported %s/%d: %v", topic, partition, err) },
		Metrics: nopMetrics{},
	})
}

// startLoop runs a loop of instance "b" (range by id, registering within
// a second, retrying after RetryCooldown, one second unless cfg says) on
// the ZooKeeper, topics, workers and signals deps names, with the test's
// log, reports, registration paths and metrics. Closing stop ends it;
// done closes once Run returned.
func startLoop(t *testing.T, cfg Config, deps Deps) (stop, done chan struct{}) {
	cfg.InstanceID, cfg.Strategy, cfg.RegisterTimeout = "b", assign.RangeByID, time.Second
	if cfg.RetryCooldown == 0 {
		cfg.RetryCooldown = time.Second
	}
	stop, done = make(chan struct{}), make(chan struct{})
	deps.Stop = stop
	deps.Log = slog.New(slog.DiscardHandler)
	deps.Report = func(topic string, partition int32, err error) { t.Errorf("reported %s/%d: %v", topic, partition, err) }
	deps.RegistrationPath = func(id string) string { return "/consumers/g/ids/" + id }
	deps.Metrics = nopMetrics{}
	l := New(cfg, deps)
	go func() { l.Run(); close(done) }()
	return stop, done
}

// wantRunning waits until the bubble is idle and fails the test unless
// fw's running workers are tps (topic/partition, sorted).
func wantRunning(t *testing.T, fw *fakeWorkers, step string, tps ...string) {
	t.Helper()
	synctest.Wait()
	if got := running(fw); !slices.Equal(got, tps) {
		t.Fatalf("%s: running %v, want %v", step, got, tps)
	}
}

// owned lists the partitions of the running workers.
func owned(workers map[TopicPartition]Worker) []int32 {
	var ps []int32
	for tp := range workers {
		ps = append(ps, tp.Partition)
	}
	slices.Sort(ps)
	return ps
}
