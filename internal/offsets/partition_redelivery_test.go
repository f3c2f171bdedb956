package offsets

import (
	"testing"

	"github.com/IBM/sarama"
)

// deliverTo offers and delivers the message at offset, as the worker does,
// and returns it.
func deliverTo(o *Partition, offset int64) *sarama.ConsumerMessage {
	m := &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: offset}
	o.Offer(m.Offset)
	o.OfferMessage(m)
	o.Delivered(m.Offset)
	return m
}

// A mark of a message delivered before a backward seek, arriving after the
// redelivery passed its offset, must not count: committing it would skip
// the part of the rewind not processed yet.
func TestLateMarkAfterBackwardSeekRefused(t *testing.T) {
	om := newCommitter(KindZookeeper, nil)
	o := om.adopt(TopicPartition{"t", 0}, nil, 0, -1, &bareOwner{})

	var before []*sarama.ConsumerMessage
	for off := int64(0); off < 10; off++ {
		before = append(before, deliverTo(o, off))
	}
	if !o.Mark(before[2], 2) {
		t.Fatal("mark of a fresh delivery refused")
	}

	o.Restart(3) // an operator rewound the partition to 3
	var after []*sarama.ConsumerMessage
	for off := int64(3); off < 9; off++ {
		after = append(after, deliverTo(o, off))
	}
	// The application finally marks message 8 it got before the seek.
	if o.Mark(before[8], 8) {
		next, _ := o.Tracker.Pending()
		t.Fatalf("late mark of a message delivered before the seek accepted: next offset to commit %d, "+
			"although only offsets below 3 were processed since the rewind", next)
	}
	// By offset only (the OffsetManager interface), inside the window: refused too.
	if o.Mark(nil, 8) {
		t.Fatal("offset-only mark inside the redelivery window accepted")
	}
	// Marks of the redelivered messages count.
	if !o.Mark(after[0], 3) || !o.Mark(after[5], 8) {
		t.Fatal("mark of a redelivered message refused")
	}
	if next, _ := o.Tracker.Pending(); next != 9 {
		t.Fatalf("next offset to commit = %d, want 9", next)
	}
	// Past the window, marks count by offset again.
	deliverTo(o, 9)
	deliverTo(o, 10)
	if !o.Mark(nil, 10) {
		t.Fatal("offset-only mark above the window refused")
	}
	if o.redelivery.Open() {
		t.Fatal("window still open after marks passed it")
	}
}

// A forward seek opens no window.
func TestForwardSeekOpensNoWindow(t *testing.T) {
	om := newCommitter(KindZookeeper, nil)
	o := om.adopt(TopicPartition{"t", 0}, nil, 0, -1, &bareOwner{})
	for off := int64(0); off < 5; off++ {
		deliverTo(o, off)
	}
	o.Restart(20)
	if o.redelivery.Open() {
		t.Fatal("a forward seek opened a redelivery window")
	}
	deliverTo(o, 20)
	if !o.Mark(nil, 20) {
		t.Fatal("mark after a forward seek refused")
	}
}

// A position lost to a truncated log moves the partition to the log's
// end without a reset only while nothing above it is committed; then the
// marks of the messages delivered past it, which are gone, never count.
func TestRestartUncommittedUnlessRewind(t *testing.T) {
	om := newCommitter(KindZookeeper, nil)
	o := om.adopt(TopicPartition{"t", 0}, nil, 0, -1, &bareOwner{})
	var before []*sarama.ConsumerMessage
	for off := int64(0); off < 10; off++ {
		before = append(before, deliverTo(o, off))
	}
	o.Mark(before[7], 7)
	o.Tracker.Committed(8)
	if o.RestartUncommittedUnlessRewind(5) {
		t.Fatal("moved to 5 below the committed 8: only a reset may store it")
	}
	if next, _ := o.Tracker.Pending(); next != 8 {
		t.Fatalf("refused move changed the position to %d, want 8", next)
	}
	if !o.RestartUncommittedUnlessRewind(8) {
		t.Fatal("move to the committed offset refused")
	}
	if next, dirty := o.Tracker.Pending(); next != 8 || !dirty {
		t.Fatalf("position %d (dirty %v), want 8 to be committed", next, dirty)
	}
	if o.Mark(before[9], 9) {
		t.Fatal("mark of a message delivered before the move, past it, accepted")
	}
	again := deliverTo(o, 8)
	if !o.Mark(again, 8) {
		t.Fatal("mark of the message read at 8 after the move refused")
	}
}
