package fence

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// A message held back while the gate was paused must not go out when the
// gate opens again if it is no longer valid by then (the session that
// claimed its partition was replaced during the pause), as once seen in the
// zombie integration test, where the gate reopened a few milliseconds before the manage
// loop stopped the old session's partitions.
func TestDeliveryGateSendToDropsStaleMessageAfterPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		g.Set(true)
		out := make(chan *sarama.ConsumerMessage, 1) // a ready receiver: only the gate holds the send
		var valid atomic.Bool
		valid.Store(true)
		type result struct{ delivered, invalid bool }
		res := make(chan result, 1)
		go func() {
			d, i := g.SendTo(t.Context().Done(), Chan(out), &sarama.ConsumerMessage{Offset: 3}, valid.Load)
			res <- result{d, i}
		}()

		time.Sleep(time.Second)
		synctest.Wait()
		valid.Store(false) // the session is replaced while fenced
		g.Set(false)       // ZooKeeper answers again
		synctest.Wait()
		if r := <-res; r.delivered || !r.invalid {
			t.Fatalf("SendTo = (delivered %v, invalid %v), want (false, true)", r.delivered, r.invalid)
		}
		if len(out) != 0 {
			t.Fatal("a stale message went out after the gate reopened")
		}
	})
}

// A valid message goes out as with send, and an invalid one never does.
func TestDeliveryGateSendToChecksBeforeFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		out := make(chan *sarama.ConsumerMessage, 1)
		m := &sarama.ConsumerMessage{Offset: 1}
		if d, i := g.SendTo(t.Context().Done(), Chan(out), m, func() bool { return true }); !d || i {
			t.Fatalf("valid: SendTo = (%v, %v), want (true, false)", d, i)
		}
		<-out
		if d, i := g.SendTo(t.Context().Done(), Chan(out), m, func() bool { return false }); d || !i {
			t.Fatalf("invalid: SendTo = (%v, %v), want (false, true)", d, i)
		}
		if len(out) != 0 {
			t.Fatal("an invalid message went out")
		}
	})
}
