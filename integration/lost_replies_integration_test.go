package integration

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationFaultLostReplies: ZooKeeper applies a commit and the connection
// drops before the reply arrives, as in a leader election or a rolling
// restart. One consumer, no other instance, 12,000 messages on 4
// partitions at 1 ms each, commits every 20 ms, and every 0.7 s the proxy
// between the consumer and ZooKeeper swallows every reply for 50 ms, then
// drops the connection. A commit whose reply was lost is in doubt; the next
// commit finds the node one version on, holding exactly what it wrote, and
// carries on. Our own commit must never be taken for someone else's change:
// 0 duplicates, 0 offset conflicts, no offset going backwards, nothing lost.
// A fault test (see faultTest): its twenty reconnects trip go-zookeeper's
// race on reconnect under -race.
func TestIntegrationFaultLostReplies(t *testing.T) {
	faultTest(t)
	const (
		partitions = int32(4)
		total      = 12000
		every      = 700 * time.Millisecond
		mute       = 50 * time.Millisecond
	)
	topic := newTopic(t, partitions)
	counts := produce(t, topic, total)
	group := testenv.UniqueName("g")
	h := newHistory(t, group, topic, partitions)

	proxy, err := tcpproxy.New(testenv.ZKAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	cfg := testConfig()
	cfg.Offsets.CommitInterval = 20 * time.Millisecond
	cg := joinVia(t, proxy.Addr(), group, []string{topic}, cfg)
	l := newLedger()
	h.attach(l)
	var conflicts, otherErrs atomic.Int64
	done := readGroup(cg, 1, l, time.Millisecond, func(err error) {
		var conflict *consumergroup.OffsetConflictError
		if errors.As(err, &conflict) {
			conflicts.Add(1)
			t.Errorf("false conflict: %v", err)
			return
		}
		otherErrs.Add(1)
		t.Logf("error (a lost connection is expected to be reported): %v", err)
	})

	stop := make(chan struct{})
	var faults atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				proxy.LoseReplies(mute)
				faults.Add(1)
			}
		}
	}()
	waitFor(t, 3*time.Minute, "every message", func() bool { return l.missing(topic, counts) == 0 })
	close(stop)
	wg.Wait()

	// The last marks are committed by Close.
	closeGroup(t, cg)
	<-done

	rep := h.assert(expectation{produced: counts})
	t.Logf("lost replies: %d windows of %v every %v; %d deliveries of %d messages, %d duplicates, %d conflicts, "+
		"%d other errors; %d offset states seen (%d sets between reads)",
		faults.Load(), mute, every, len(l.snapshot()), total, l.duplicates(), conflicts.Load(), otherErrs.Load(), rep.offsetWrites, rep.missedSets)
	if n := l.missing(topic, counts); n != 0 {
		t.Errorf("%d messages never delivered", n)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicates, want 0", d)
	}
	if faults.Load() < 5 {
		t.Errorf("only %d reply-loss windows: the test did not exercise the fault", faults.Load())
	}
}
