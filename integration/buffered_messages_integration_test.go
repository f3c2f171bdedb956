package integration

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationBufferedMessagesDrainTimeoutTakesBackOnlyItsOwn: with a
// buffered Messages() (Messages.Buffer 64) shared by eight partitions, the
// first member's reader stops reading while a second member joins, longer
// than Offsets.ProcessingTimeout. The drains of the partitions it gives up
// time out with their messages unread in the shared buffer, and each takes
// back its own. The messages of the partitions it keeps stay in the
// buffer, in order, for its reader when it resumes: nothing is lost, and
// nothing is delivered twice (the reader marked all it got before it
// stopped). Taking back by reading the shared channel, as a claim's own
// buffer is taken back, would take the kept partitions' messages too, and
// lose them.
func TestIntegrationBufferedMessagesDrainTimeoutTakesBackOnlyItsOwn(t *testing.T) {
	testenv.Integration(t)
	const partitions = 8
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	counts := produce(t, topic, partitions*300)
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)

	cfg := testConfig()
	cfg.Messages.Buffer = 64
	cfg.Offsets.ProcessingTimeout = 300 * time.Millisecond
	a := join(t, group, []string{topic}, cfg)
	var stalled atomic.Bool
	resume := make(chan struct{})
	doneA := drainGroup(a, func(m *sarama.ConsumerMessage) {
		l.add(delivery{consumer: 1, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
		time.Sleep(time.Millisecond)
		_ = a.CommitUpto(m)
		if stalled.Load() {
			<-resume // marked first: nothing of the reader's is left unmarked
		}
	}, func(err error) { t.Logf("consumer 1: error: %v", err) })
	waitFor(t, 60*time.Second, "a backlog to be processed in part", func() bool { return l.distinct() >= 400 })

	stalled.Store(true)
	stopB := messagesMember(t, testenv.ZKAddr(), group, []string{topic}, cfg, 2, l, 0)
	defer stopB()
	gained := func() bool {
		got := map[int32]bool{}
		for _, d := range l.snapshot() {
			if d.consumer == 2 {
				got[d.partition] = true
			}
		}
		return len(got) == partitions/2
	}
	waitFor(t, 60*time.Second, "the joiner to deliver from each partition it gained", gained)
	stalled.Store(false)
	close(resume)
	waitFor(t, 120*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
	closeGroup(t, a)
	<-doneA
	stopB()

	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages lost", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries", d)
	}
	rep := h.assert(expectation{produced: counts})
	if rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v)", rep.dups, rep.dupsBy)
	}
}

// TestIntegrationBufferedMessagesCloseFromTheReader: the application reads
// a buffered Messages() (Messages.Buffer 64), marks what it read, and
// calls Close from its reading goroutine, with messages left in the
// buffer that nobody will read. Close takes them back rather than wait
// for their marks until Offsets.ProcessingTimeout (30 s here), and stores
// the marks: a second member delivers the rest, nothing lost, nothing
// twice.
func TestIntegrationBufferedMessagesCloseFromTheReader(t *testing.T) {
	testenv.Integration(t)
	const partitions = 4
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	counts := produce(t, topic, partitions*200)
	l := newLedger()

	cfg := testConfig()
	cfg.Messages.Buffer = 64
	cfg.Offsets.ProcessingTimeout = 30 * time.Second
	a := join(t, group, []string{topic}, cfg)
	for read := 0; read < 100; read++ {
		select {
		case m := <-a.Messages():
			l.add(delivery{consumer: 1, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
			if err := a.CommitUpto(m); err != nil {
				t.Fatalf("mark %d/%d: %v", m.Partition, m.Offset, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("read %d messages, then nothing for 30 s", read)
		}
	}
	waitFor(t, 10*time.Second, "the buffer to fill", func() bool { return len(a.Messages()) == cfg.Messages.Buffer })
	began := time.Now()
	closeGroup(t, a)
	took := time.Since(began)
	if took > 10*time.Second {
		t.Errorf("Close from the reader took %v with Offsets.ProcessingTimeout %v; it waited for marks of messages nobody reads", took, cfg.Offsets.ProcessingTimeout)
	}
	t.Logf("Close from the reading goroutine took %v", took.Round(time.Millisecond))

	stopB := messagesMember(t, testenv.ZKAddr(), group, []string{topic}, testConfig(), 2, l, 0)
	defer stopB()
	waitFor(t, 60*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
	stopB()
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries", d)
	}
}
