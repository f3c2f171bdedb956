package offsets

import (
	"testing"

	"github.com/IBM/sarama"
)

func msg(offset int64) *sarama.ConsumerMessage {
	return &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: offset}
}

// Inside the window a mark counts only for the message redelivered at its
// offset; below it the tracker judges, above it the window closes.
func TestRedeliveryWindow(t *testing.T) {
	var r Redelivery
	if !r.Allows(nil, 5) || r.Open() {
		t.Fatal("no window open, yet a mark was refused")
	}
	early := msg(7) // delivered before the seek
	r.Restart(3, 9)
	if !r.Open() {
		t.Fatal("a backward seek opened no window")
	}
	again := make(map[int64]*sarama.ConsumerMessage)
	for o := int64(3); o <= 8; o++ {
		again[o] = msg(o)
		r.Offered(again[o])
	}
	if !r.Allows(nil, 2) {
		t.Fatal("a mark below the window is the tracker's to judge")
	}
	if r.Allows(early, 7) {
		t.Fatal("a mark of a message delivered before the seek counted")
	}
	if r.Allows(nil, 7) {
		t.Fatal("a mark by offset only counted inside the window")
	}
	if !r.Allows(again[5], 5) {
		t.Fatal("a mark of a redelivered message refused")
	}
	if !r.Allows(again[8], 8) || !r.Open() {
		t.Fatal("a mark of a redelivered message refused, or the window closed before far")
	}
	if !r.Allows(nil, 10) || r.Open() {
		t.Fatal("a mark above the window refused, or the window stayed open")
	}
}

// A mark at far closes the window; a forward seek opens none and closes
// an open one.
func TestRedeliveryCloses(t *testing.T) {
	var r Redelivery
	r.Restart(0, 1)
	m0, m1 := msg(0), msg(1)
	r.Offered(m0)
	r.Offered(m1)
	if !r.Allows(m1, 1) || r.Open() {
		t.Fatal("a mark at far did not close the window")
	}

	r.Restart(0, 4)
	r.Restart(10, 4) // forward
	if r.Open() {
		t.Fatal("a forward seek left a window open")
	}
	if !r.Allows(nil, 2) {
		t.Fatal("mark refused with no window open")
	}
	r.Restart(-1, 4) // nothing stored
	if r.Open() {
		t.Fatal("a seek to no offset opened a window")
	}
}

// Beyond maxRedeliveryWindow offsets nothing is remembered: marks there
// are refused until one above the window arrives.
func TestRedeliveryWindowBound(t *testing.T) {
	var r Redelivery
	far := int64(maxRedeliveryWindow + 10)
	r.Restart(0, far)
	beyond := msg(maxRedeliveryWindow + 1)
	r.Offered(beyond)
	if r.Allows(beyond, beyond.Offset) {
		t.Fatal("a mark beyond the remembered part of the window counted")
	}
	if !r.Allows(nil, far+1) || r.Open() {
		t.Fatal("a mark above the window refused, or the window stayed open")
	}
}
