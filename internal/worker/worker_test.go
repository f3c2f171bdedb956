package worker

import (
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
