package worker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
)

// fakePartitionConsumer serves messages and errors from channels the test
// fills; pump uses nothing else of it.
type fakePartitionConsumer struct {
	sarama.PartitionConsumer
	msgs chan *sarama.ConsumerMessage
	errs chan *sarama.ConsumerError
}

func newFakePartitionConsumer(offsets ...int64) *fakePartitionConsumer {
	pc := &fakePartitionConsumer{
		msgs: make(chan *sarama.ConsumerMessage, len(offsets)+8),
		errs: make(chan *sarama.ConsumerError, 1),
	}
	for _, o := range offsets {
		pc.msgs <- &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o}
	}
	return pc
}

func (pc *fakePartitionConsumer) Messages() <-chan *sarama.ConsumerMessage { return pc.msgs }
func (pc *fakePartitionConsumer) Errors() <-chan *sarama.ConsumerError     { return pc.errs }
func (pc *fakePartitionConsumer) HighWaterMarkOffset() int64               { return 0 }

// openedConsumer is a Source over pc, open already.
func openedConsumer(pc sarama.PartitionConsumer) fetch.Source {
	return fetch.FromPartitionConsumer(pc, nil, nil)
}

// An event that cuts a hand-over short never skips the message being
// handed over. Here the application is busy while pump offers offset 5; a
// seek to 5 (an offset conflict adopting what it already consumes from)
// lands then. pump must return to resume at 5, and the restarted pump must
// hand 5 over first: skipping it (and the ones after it) while later ones
// are delivered and marked would commit past messages the application
// never saw. A seek taken before the first hand-over returns at once.
//
// The local stack's ZooKeeper serves the claim's validity check (see
// newPumpFixture).
func TestIntegrationSeekDuringHandOverSkipsNoMessage(t *testing.T) {
	f := newPumpFixture(t, 0) // unbuffered, as Messages()

	f.w.inbox.SeekTo(5)
	if r := await(t, f.run()); r.ended || r.e != Seek || r.resume != 5 {
		t.Fatalf("pump = %+v, want to resume at 5", r)
	}

	// The application is busy: offset 5 waits in the hand-over.
	pumped := f.runFrom(openedConsumer(newFakePartitionConsumer(5, 6, 7)), 5)
	time.Sleep(200 * time.Millisecond)
	f.w.inbox.SeekTo(5)
	if r := await(t, pumped); r.ended || r.e != Seek || r.resume != 5 {
		t.Fatalf("pump = %+v after a seek during the hand-over, want to resume at 5", r)
	}
	if d := f.owned.Tracker.LastDelivered(); d >= 5 {
		t.Errorf("offset %d counted as delivered, although the hand-over was cut short", d)
	}

	pumped = f.runFrom(openedConsumer(newFakePartitionConsumer(5, 6, 7)), 5)
	select {
	case m := <-f.out:
		if m.Offset != 5 {
			t.Errorf("the application got offset %d first, want 5: offsets 5..%d were skipped", m.Offset, m.Offset-1)
		}
	case <-time.After(2 * time.Second):
		t.Error("offset 5 was never handed over after the seek")
	}

	f.w.Stop(false)
	if r := await(t, pumped); !r.ended || r.e != Stop {
		t.Errorf("pump = %+v after the stop, want to end with stop", r)
	}
}
