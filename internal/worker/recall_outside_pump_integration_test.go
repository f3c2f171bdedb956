package worker

import (
	"testing"
)

// Fenced off while the worker is away from pump, with messages unread in a
// claim's buffer: between two partition consumers the worker may wait for
// long (sarama opens a partition consumer without a context, with 30 s
// timeouts; a cool-down; a start commit ZooKeeper does not answer). The
// pause itself takes the buffer back at once, so the handler reads nothing
// more while another instance may take the partition over, and the pause
// posted again restarts the fetch at the marked offset below what was
// taken back. With the pause only posted for pump to take, the buffer kept
// all four messages until the worker came back to pump.
func TestIntegrationRecallOnPauseOutsidePump(t *testing.T) {
	f := newPumpFixture(t, 8)
	f.w.takeBackFrom = f.owned // as consume sets it
	pc := newFakePartitionConsumer(0, 1, 2, 3, 4, 5)

	f.w.handing.Lock() // as consume holds it around pump
	res := f.runFrom(openedConsumer(pc), 0)
	f.waitBuffered(t, 6)
	m0, m1 := <-f.out, <-f.out // the handler gets 0 and 1, marks 0
	if !f.owned.Mark(m0, m0.Offset) {
		t.Fatal("mark of 0 refused")
	}
	close(pc.msgs) // sarama gave up on the partition: pump returns to open another
	r := await(t, res)
	f.w.handing.Unlock()
	if r.ended || r.resume != 6 {
		t.Fatalf("pump = %+v, want to resume at 6 on another partition consumer", r)
	}

	f.gate.Set(true) // fenced off while the next partition consumer opens
	if n := len(f.out); n != 0 {
		t.Errorf("the claim's buffer still holds %d messages while fenced off and away from pump", n)
	}
	if next, _ := f.owned.Tracker.Pending(); next != 1 {
		t.Errorf("position %d while fenced off, want the marked 1", next)
	}
	f.w.handing.Lock()
	e, to, ended, ok := f.w.takeWhileConsuming(r.resume)
	f.w.handing.Unlock()
	if !ok || ended || e != Pause || to != 1 {
		t.Errorf("takeWhileConsuming = %v, %d, ended %v, ok %v; want a pause restarting at the marked offset 1", e, to, ended, ok)
	}
	if f.owned.Mark(m1, m1.Offset) {
		t.Error("a mark of a message delivered before the restart was accepted")
	}
	f.gate.Set(false)
}
