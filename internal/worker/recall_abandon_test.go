package worker

import (
	"runtime"
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

// A handler may read the claim's buffer while the worker takes it back, so
// it can get a message above one taken back (the worker receives 5, the
// handler 6) and mark it. After a loss that changes nothing (the lost
// claim commits nothing), but after an abandon or an expiry the partition
// stays tracked until the release drops it, and the commit loop may commit
// it meanwhile (the epoch still ours): the position it would store must
// never pass a message the handler never got.
func TestRecallOnAbandonNeverCommitsPastWhatWasTakenBack(t *testing.T) {
	const size, rounds = 64, 2000
	for round := 0; round < rounds; round++ {
		w := newTestWorker(Deps{})
		owned := adoptAt(w, testClaim(0), 0)
		w.owned = owned
		w.out = make(chan *sarama.ConsumerMessage, size)
		for o := int64(0); o < size; o++ {
			owned.Offer(o)
			w.out <- &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o}
			owned.Delivered(o)
		}
		got := make(map[int64]bool)
		var wg sync.WaitGroup
		started := make(chan struct{})
		stop := make(chan struct{})
		wg.Add(1)
		go func() { // the handler: reads and marks until the worker is done
			defer wg.Done()
			first := true
			for {
				select {
				case m := <-w.out:
					got[m.Offset] = true
					owned.Mark(m, m.Offset)
					if first {
						close(started)
						first = false
					}
					runtime.Gosched() // let the worker's recall run beside

				case <-stop:
					return
				}
			}
		}()
		<-started
		w.Stop(true)
		if e, _, ended, _ := w.takeWhileConsuming(0); e != Abandon || !ended {
			t.Fatalf("took %v (ended %v), want abandon", e, ended)
		}
		close(stop)
		wg.Wait()
		w.cancel()
		lowest := int64(-1)
		for o := int64(0); o < size; o++ {
			if !got[o] {
				lowest = o
				break
			}
		}
		if next, _ := owned.Tracker.Pending(); lowest >= 0 && next > lowest {
			t.Fatalf("round %d: a commit would store %d, past %d, which the handler never got", round, next, lowest)
		}
	}
}
