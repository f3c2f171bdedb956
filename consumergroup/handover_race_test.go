package consumergroup

import (
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
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

// A seek puts its target on seekC and only then cancels the hand-over in
// progress. Pump may take the target from seekC in its blocking select,
// return, and be started again at the target (with a new hand-over context)
// before the seeking goroutine gets to the cancel: the cancel then lands on
// the new pump's hand-over. That pump must not treat the message it was
// handing over as done with: skipping it (and the ones after it while the
// context stays cancelled) while later ones are delivered and marked
// commits past messages the application never saw.
//
// The kazoo session only serves the claim's validity check (the claim's
// session is the current one), hence the ZooKeeper of the local stack.
func TestIntegrationLateSeekCancelSkipsNoMessage(t *testing.T) {
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()

	cg := &ConsumerGroup{
		log:      slog.New(slog.DiscardHandler),
		kazoo:    kz,
		gate:     newDeliveryGate(),
		messages: make(chan *sarama.ConsumerMessage),
		errors:   make(chan error, 8),
	}
	w := newBareWorker()
	defer w.cancel()
	w.cg = cg
	w.tp = topicPartition{"t", 0}
	owned := &ownedOffsets{
		tp: w.tp, tracker: newOffsetTracker(0), worker: w, version: -1,
		claim: &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i", SessionID: kz.SessionID()},
	}
	owned.maxOffered.Store(-1)

	// The seek's first half: its target is on seekC, the pending flag set;
	// its goroutine is descheduled before it cancels the hand-over.
	w.seekC <- 5
	w.pending.Store(true)
	resume, stop := w.pump(owned, newFakePartitionConsumer(), nil, 0)
	if stop || resume != 5 {
		t.Fatalf("pump = (%d, %v), want to resume at 5", resume, stop)
	}

	// consume starts pump again at the target; the application is busy,
	// so the first message waits in the hand-over.
	pc := newFakePartitionConsumer(5, 6, 7)
	type result struct {
		resume int64
		stop   bool
	}
	pumped := make(chan result, 1)
	go func() {
		r, s := w.pump(owned, pc, nil, 5)
		pumped <- result{r, s}
	}()
	time.Sleep(200 * time.Millisecond)

	// The seek's second half lands now, on the new pump's hand-over.
	w.interruptHandOver()
	time.Sleep(200 * time.Millisecond)

	select {
	case m := <-cg.messages:
		if m.Offset != 5 {
			t.Errorf("the application got offset %d first, want 5: offsets 5..%d were skipped", m.Offset, m.Offset-1)
		}
	case <-time.After(2 * time.Second):
		t.Error("offset 5 was never handed over after a seek's late cancel (skipped, with 6 and 7)")
	}

	w.cancel()
	w.pending.Store(true)
	select {
	case r := <-pumped:
		if !r.stop {
			t.Errorf("pump = (%d, %v) after the stop, want stop", r.resume, r.stop)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pump did not stop")
	}
}
