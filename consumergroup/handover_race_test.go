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

// An event that cuts a hand-over short never skips the message being
// handed over. Here the application is busy while pump offers offset 5; a
// seek to 5 (an offset conflict adopting what it already consumes from)
// lands then. pump must return to resume at 5, and the restarted pump must
// hand 5 over first: skipping it (and the ones after it) while later ones
// are delivered and marked would commit past messages the application
// never saw. A seek taken before the first hand-over returns at once.
//
// The kazoo session only serves the claim's validity check (the claim's
// session is the current one), hence the ZooKeeper of the local stack.
func TestIntegrationSeekDuringHandOverSkipsNoMessage(t *testing.T) {
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

	w.seek(5)
	if resume, e, ended := w.pump(owned, openedConsumer(newFakePartitionConsumer()), nil, 0); ended || e != eventSeek || resume != 5 {
		t.Fatalf("pump = (%d, %v, ended %v), want to resume at 5", resume, e, ended)
	}

	type result struct {
		resume int64
		e      workerEvent
		ended  bool
	}
	run := func(pc *fakePartitionConsumer, start int64) chan result {
		pumped := make(chan result, 1)
		go func() {
			r, e, ended := w.pump(owned, openedConsumer(pc), nil, start)
			pumped <- result{r, e, ended}
		}()
		return pumped
	}
	// The application is busy: offset 5 waits in the hand-over.
	pumped := run(newFakePartitionConsumer(5, 6, 7), 5)
	time.Sleep(200 * time.Millisecond)
	w.seek(5)
	select {
	case r := <-pumped:
		if r.ended || r.e != eventSeek || r.resume != 5 {
			t.Fatalf("pump = (%d, %v, ended %v) after a seek during the hand-over, want to resume at 5", r.resume, r.e, r.ended)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a seek did not cut the hand-over short")
	}
	if d := owned.tracker.delivered.Load(); d >= 5 {
		t.Errorf("offset %d counted as delivered, although the hand-over was cut short", d)
	}

	pumped = run(newFakePartitionConsumer(5, 6, 7), 5)
	select {
	case m := <-cg.messages:
		if m.Offset != 5 {
			t.Errorf("the application got offset %d first, want 5: offsets 5..%d were skipped", m.Offset, m.Offset-1)
		}
	case <-time.After(2 * time.Second):
		t.Error("offset 5 was never handed over after the seek")
	}

	w.stop(false)
	select {
	case r := <-pumped:
		if !r.ended || r.e != eventStop {
			t.Errorf("pump = (%d, %v, ended %v) after the stop, want to end with stop", r.resume, r.e, r.ended)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pump did not stop")
	}
}
