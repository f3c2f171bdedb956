package fetch

// handOver runs deliver, the hand-over of a busy round to broker id, in a
// goroutine of its own, so that the next round goes out meanwhile: a
// rebalance's first fetches queued while the broker answered a round of
// hundreds of partitions went out only once that round's answers were
// scanned and handed to their feeds, 10-50 ms on a loaded machine. The
// round loop waits for one hand-over before it hands over the next
// (handedOver), so answers go out in the rounds' order and at most one
// round is handed over while the next is fetched. A round loop that finds
// nothing to send ends without waiting; wants the hand-over queues again
// start it anew (see answer). See docs/batch-feed.md, "Rounds".
func (f *roundFetcher) handOver(id int32, deliver func()) {
	done := make(chan struct{})
	f.mu.Lock()
	f.handing[id] = done
	f.mu.Unlock()
	f.rounds.Add(1) // within the round loop's count: closeConns waits for both
	go func() {
		defer f.rounds.Done()
		deliver()
		f.mu.Lock()
		if f.handing[id] == done {
			delete(f.handing, id)
		}
		f.mu.Unlock()
		close(done)
	}()
}

// handedOver waits for the hand-over of broker id's last busy round, if
// one runs.
func (f *roundFetcher) handedOver(id int32) {
	f.mu.Lock()
	done := f.handing[id]
	f.mu.Unlock()
	if done != nil {
		<-done
	}
}
