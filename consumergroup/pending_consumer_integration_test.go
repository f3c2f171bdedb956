package consumergroup

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func prefixOf(offsets ...int64) []*sarama.ConsumerMessage {
	var out []*sarama.ConsumerMessage
	for _, o := range offsets {
		out = append(out, &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o})
	}
	return out
}

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

// The directly fetched prefix goes out while the partition consumer is
// still opening; its messages follow once it is open.
func TestIntegrationPrefixBeforeOpen(t *testing.T) {
	f := newPumpFixture(t, 0)
	src := &pendingConsumer{ready: make(chan struct{})}
	res := f.runFrom(src, prefixOf(0, 1), 0)
	receive(t, f.out, 0)
	receive(t, f.out, 1)
	src.spc = newFakePartitionConsumer(2, 3)
	close(src.ready)
	receive(t, f.out, 2)
	receive(t, f.out, 3)
	f.w.stop(false)
	if r := await(t, res); !r.ended || r.e != eventStop {
		t.Fatalf("pump = %+v, want to end with stop", r)
	}
}

// A background open that fails after the prefix went out resumes right
// after the prefix, skipping nothing.
func TestIntegrationFailedOpenResumesAfterPrefix(t *testing.T) {
	f := newPumpFixture(t, 0)
	src := &pendingConsumer{ready: make(chan struct{})}
	res := f.runFrom(src, prefixOf(5, 6), 5)
	receive(t, f.out, 5)
	receive(t, f.out, 6)
	src.err = errors.New("leader not available")
	close(src.ready)
	if r := await(t, res); r.ended || r.resume != 7 {
		t.Fatalf("pump = %+v, want to resume at 7", r)
	}
	if src.close() == nil {
		t.Error("close of a failed open reported no error: consume would not open again with open's checks")
	}
}
