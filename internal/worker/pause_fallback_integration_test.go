package worker

import (
	"testing"
	"time"
)

// An application's pause holds a partition across a fallback to sarama's
// partition consumer: the batch feed's source ends while the partition is
// paused, the worker reopens it through a partition consumer opened after
// the pause (one that sarama's own Pause, called before it existed, would
// not reach), and nothing is handed over until the resume; then all of it
// is, in order.
func TestIntegrationPauseHoldsAcrossFallback(t *testing.T) {
	f := newPumpFixture(t, 0)
	feed := newFakePartitionConsumer(5) // the feed's source, before the fallback
	res := f.runFrom(openedConsumer(feed), 5)
	receive(t, f.out, 5)
	f.owned.Pause.Set(true)
	close(feed.msgs) // the feed fails: the partition falls back
	r := await(t, res)
	if r.ended || r.resume != 6 {
		t.Fatalf("pump = %+v, want to resume at 6", r)
	}

	fallback := newFakePartitionConsumer(6, 7) // sarama's, opened after the pause
	res = f.runFrom(openedConsumer(fallback), r.resume)
	select {
	case m := <-f.out:
		t.Fatalf("offset %d handed over while paused, after the fallback", m.Offset)
	case <-time.After(300 * time.Millisecond):
	}
	f.owned.Pause.Set(false)
	receive(t, f.out, 6)
	receive(t, f.out, 7)
	f.w.inbox.Stop()
	await(t, res)
}
