package worker

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/zkgroup/kafka/internal/coord"
)

// A worker started with a predecessor (prev) that is still draining, and
// stopped again before prev is done, must not close its done channel before
// prev's: reconcile tracks only the successor, so manage's stopAll (Close)
// and the next reconcile rely on "done" covering the predecessor too.
func TestSuccessorDoneImpliesPredecessorDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prev := &Worker{done: make(chan struct{})} // stopped, still draining/committing/releasing
		exited := make(chan coord.Worker)
		w := newTestWorker(Deps{})
		w.prev, w.exited = prev, exited
		go w.run()
		synctest.Wait()
		w.Stop(false) // rebalanced away again, or Close's stopAll
		synctest.Wait()
		select {
		case <-w.done:
			select {
			case <-prev.done:
			default:
				t.Error("successor's done closed while its predecessor still runs: manage (stopAll, reconcile) no longer waits for the predecessor")
			}
		default:
		}
		close(prev.done)
		synctest.Wait()
	})
}

// A worker that ends before its partition is open closes Opened all the
// same (as it does Claimed): the manage loop waits on it before it reads
// the leaders of the partitions a rebalance gained.
func TestWorkerEndedUnopenedClosesOpened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prev := &Worker{done: make(chan struct{})} // holds the new worker in claiming
		w := newTestWorker(Deps{})
		w.prev, w.exited = prev, make(chan coord.Worker)
		go w.run()
		synctest.Wait()
		select {
		case <-w.Opened():
			t.Fatal("Opened closed while the worker waits to claim")
		default:
		}
		w.Stop(false)
		close(prev.done)
		<-w.Done()
		select {
		case <-w.Opened():
		default:
			t.Fatal("the worker ended unopened and left Opened open: whoever waits on it waits for good")
		}
	})
}

// expectingFetch counts the partitions its worker said are expected to
// open (ExpectOpen) and not opened yet.
type expectingFetch struct {
	Fetch    // Partition: not reached
	expected atomic.Int32
}

func (f *expectingFetch) ExpectOpen() func() {
	f.expected.Add(1)
	var once sync.Once
	return func() { once.Do(func() { f.expected.Add(-1) }) }
}

// A worker tells the fetch engine its partition is expected to open from
// its start, while it claims, and ends that once it is open, or when it
// ends unopened: the engine holds long polls back meanwhile
// (fetch.Engine.ExpectOpen), and a worker that never opens must not keep
// holding them.
func TestWorkerExpectsToOpenUntilOpenedOrEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &expectingFetch{}
		prev := &Worker{done: make(chan struct{})} // holds the new worker in claiming
		w := newTestWorker(Deps{Fetch: f})
		w.prev, w.exited = prev, make(chan coord.Worker)
		go w.run()
		synctest.Wait()
		if n := f.expected.Load(); n != 1 {
			t.Fatalf("claiming: %d partitions expected to open, want 1", n)
		}
		w.Stop(false)
		close(prev.done)
		<-w.Done()
		if n := f.expected.Load(); n != 0 {
			t.Fatalf("the worker ended unopened and left %d partitions expected to open: long polls held up to a second", n)
		}

		w = newTestWorker(Deps{Fetch: f})
		w.openExpected = f.ExpectOpen()
		w.markOpened()
		w.markOpened()
		if n := f.expected.Load(); n != 0 {
			t.Fatalf("opened: %d partitions expected to open, want 0", n)
		}

		// Stopped while consuming, before its source opened (the sink
		// refused it, say): its drain, commit and release may take long,
		// and it will not open.
		for _, st := range []State{Draining, Releasing} {
			w = newTestWorker(Deps{Fetch: f})
			w.openExpected = f.ExpectOpen()
			w.enter(Consuming)
			if n := f.expected.Load(); n != 1 {
				t.Fatalf("consuming, not open yet: %d partitions expected to open, want 1", n)
			}
			w.enter(st)
			if n := f.expected.Load(); n != 0 {
				t.Fatalf("%v unopened: still %d partitions expected to open, until the worker ends", st, n)
			}
		}
	})
}
