package worker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// receive takes the next message handed over, which must be at offset
// want.
func receive(t *testing.T, out <-chan *sarama.ConsumerMessage, want int64) {
	t.Helper()
	select {
	case m := <-out:
		if m.Offset != want {
			t.Fatalf("got offset %d, want %d", m.Offset, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("offset %d never handed over", want)
	}
}

// A source that ends on its own (a failed background open, a feed error,
// sarama giving up on the partition) after some messages went out: pump
// resumes right after the last one handed over, skipping nothing.
func TestIntegrationEndedSourceResumesAfterLastDelivered(t *testing.T) {
	f := newPumpFixture(t, 0)
	pc := newFakePartitionConsumer(5, 6)
	res := f.runFrom(openedConsumer(pc), 5)
	receive(t, f.out, 5)
	receive(t, f.out, 6)
	close(pc.msgs) // the source ends
	if r := await(t, res); r.ended || r.resume != 7 {
		t.Fatalf("pump = %+v, want to resume at 7", r)
	}
	// Nothing went out: resume where pump started.
	pc = newFakePartitionConsumer()
	close(pc.msgs)
	if r := await(t, f.runFrom(openedConsumer(pc), 5)); r.ended || r.resume != 5 {
		t.Fatalf("pump = %+v over a source that ended at once, want to resume at 5", r)
	}
}
