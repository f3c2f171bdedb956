package coord

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeWorker is a Worker that ends at once when stopped (and, as a real
// worker does, closes Claimed then if it never claimed).
type fakeWorker struct {
	tp          TopicPartition
	prev        Worker
	done        chan struct{}
	claimed     chan struct{}
	mayHoldNode bool
	claimEnded  bool

	mu      sync.Mutex
	stops   []bool // the abandon argument of each Stop
	endOnce sync.Once
}

func newFakeWorker(tp TopicPartition, prev Worker) *fakeWorker {
	return &fakeWorker{tp: tp, prev: prev, done: make(chan struct{}), claimed: make(chan struct{})}
}

func (w *fakeWorker) Partition() TopicPartition { return w.tp }
func (w *fakeWorker) Done() <-chan struct{}     { return w.done }
func (w *fakeWorker) Claimed() <-chan struct{}  { return w.claimed }
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
		select {
		case <-w.claimed:
		default:
			close(w.claimed)
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
	mu      sync.Mutex
	started []*fakeWorker
	swept   []*fakeWorker
}

func (f *fakeWorkers) Start(tp TopicPartition, prev Worker, _ chan<- Worker) Worker {
	w := newFakeWorker(tp, prev)
	f.mu.Lock()
	f.started = append(f.started, w)
	f.mu.Unlock()
	return w
}

func (f *fakeWorkers) SweepOwnerNode(tp TopicPartition) Worker {
	w := newFakeWorker(tp, nil)
	w.end() // a sweep here is done at once
	f.mu.Lock()
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

// owned lists the partitions of the running workers.
func owned(workers map[TopicPartition]Worker) []int32 {
	var ps []int32
	for tp := range workers {
		ps = append(ps, tp.Partition)
	}
	slices.Sort(ps)
	return ps
}
