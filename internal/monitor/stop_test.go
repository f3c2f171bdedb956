package monitor

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// Stop cancels a ListOffsets request in flight and waits for the refresh
// to end: once it has returned, the refresh is gone and no lag gauge is
// set, even when the held answer comes afterwards.
func TestStopCancelsRefreshInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, g := newFakeSession(), newFakeGauges()
		k := &fakeKafka{
			owned:   owned(1),
			leaders: map[TopicPartition]Broker{tp(0): b1},
			hwms:    map[TopicPartition]int64{tp(0): 12},
			hold:    make(chan struct{}),
			asked:   make(chan struct{}, 1),
		}
		m := Start(time.Second, deps(s, g, k))
		<-k.asked // the first round's request is in flight
		m.Stop()
		stopped := k.closes() == 1
		close(k.hold) // the answer comes after Stop returned
		synctest.Wait()

		if !stopped {
			t.Error("Stop returned before the lag refresh ended")
		}
		if got := k.sent(); len(got) != 1 || !got[0].cancelled {
			t.Errorf("requests %+v, want one, cancelled by Stop", got)
		}
		if lags := g.lagSet(); len(lags) != 0 {
			t.Errorf("lag gauges set after Stop returned: %v", lags)
		}
		s.set(kazoo.SessionClosed, 1)
		m.AwaitSessionWatch()
	})
}
