package worker

import (
	"fmt"
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

func msgOf(p int32, off int64) *sarama.ConsumerMessage {
	return &sarama.ConsumerMessage{Topic: "t", Partition: p, Offset: off}
}

// fakeOvertaker records what a take-back tells a partition.
type fakeOvertaker struct {
	mu     sync.Mutex
	held   int   // commit holds in force
	lowest []int // lowest offsets told, each with commits held
}

func (f *fakeOvertaker) holdCommits() func() {
	f.mu.Lock()
	f.held++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.held--
		f.mu.Unlock()
	}
}

func (f *fakeOvertaker) takenBack(ms []*sarama.ConsumerMessage, _ int64) {
	lowest := ms[0].Offset
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == 0 {
		panic("overtaken told without commits held")
	}
	f.lowest = append(f.lowest, int(lowest))
}

func (f *fakeOvertaker) told() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.lowest...)
}

// registered returns an outbox of capacity and a part for each of the
// partitions 0..parts-1, with their fake workers.
func registered(capacity, parts int) (*Outbox, []*OutboxPart, []*fakeOvertaker) {
	o := NewOutbox(capacity)
	var ps []*OutboxPart
	var ws []*fakeOvertaker
	for p := range int32(parts) {
		w := &fakeOvertaker{}
		ps = append(ps, o.Register(TopicPartition{Topic: "t", Partition: p}, w))
		ws = append(ws, w)
	}
	return o, ps, ws
}

// A take-back returns the partition's messages in their order and leaves
// the others in the channel, in theirs, untold: the application got none
// after them.
func TestOutboxTakeBackKeepsTheOthersInOrder(t *testing.T) {
	o, ps, ws := registered(8, 2)
	for _, m := range []*sarama.ConsumerMessage{msgOf(0, 1), msgOf(1, 1), msgOf(0, 2), msgOf(1, 2), msgOf(0, 3)} {
		if !ps[m.Partition].TrySend(m) {
			t.Fatal("no room in an outbox of 8")
		}
	}
	got := ps[0].TakeBack()
	if fmt.Sprint(offsetsOf(got)) != "[1 2 3]" {
		t.Fatalf("took back %v, want partition 0's offsets 1, 2, 3", offsetsOf(got))
	}
	if told := ws[1].told(); len(told) != 0 {
		t.Errorf("partition 1 told it was overtaken at %v; the application read nothing", told)
	}
	var left []string
	for len(o.C()) > 0 {
		m := <-o.C()
		left = append(left, fmt.Sprintf("%d/%d", m.Partition, m.Offset))
	}
	if fmt.Sprint(left) != "[1/1 1/2]" {
		t.Errorf("left %v, want partition 1's offsets 1, 2 in order", left)
	}
	if got := ps[0].TakeBack(); got != nil {
		t.Errorf("a second take-back from an empty outbox took %v", offsetsOf(got))
	}
}

// A partition whose messages the application overtook (it read a later
// one while the take-back held an earlier one) is told, from the lowest
// offset taken, with its commits held, and its messages are not put
// back; the trigger's own are returned whatever the application read.
func TestOutboxTakeBackTellsAnOvertakenPartition(t *testing.T) {
	o, ps, ws := registered(8, 2)
	for _, m := range []*sarama.ConsumerMessage{msgOf(1, 1), msgOf(1, 2), msgOf(0, 7), msgOf(1, 3)} {
		ps[m.Partition].TrySend(m)
	}
	// What a take-back finds when the application got 1/2 while 1/1 was
	// in the take-back's hands: 1/1 and 1/3 left of partition 1's sends.
	for len(o.C()) > 0 {
		<-o.C()
	}
	o.C() <- msgOf(1, 1)
	o.C() <- msgOf(0, 7)
	o.C() <- msgOf(1, 3)
	if got := ps[0].TakeBack(); fmt.Sprint(offsetsOf(got)) != "[7]" {
		t.Fatalf("took back %v, want partition 0's offset 7", offsetsOf(got))
	}
	if told := ws[1].told(); fmt.Sprint(told) != "[1]" {
		t.Fatalf("partition 1 told %v, want overtaken from offset 1", told)
	}
	if n := len(o.C()); n != 0 {
		t.Errorf("%d messages put back; an overtaken partition's must not be", n)
	}
	if ws[1].held != 0 {
		t.Errorf("partition 1's commits still held after the take-back")
	}
	// Its ring starts afresh: its next sends are its last ones.
	ps[1].TrySend(msgOf(1, 1))
	ps[1].TrySend(msgOf(1, 2))
	ps[0].TrySend(msgOf(0, 8))
	ps[0].TakeBack()
	if told := ws[1].told(); len(told) != 1 || len(o.C()) != 2 {
		t.Errorf("after the restart: told %v, %d put back; want nothing told, 2 put back", told, len(o.C()))
	}
}

// A send waiting for room when a take-back begins is neither lost nor
// reordered: it waits for the take-back, then sends.
func TestOutboxSendWaitingForRoomSurvivesATakeBack(t *testing.T) {
	o, ps, _ := registered(2, 2)
	ps[1].TrySend(msgOf(1, 1))
	ps[0].TrySend(msgOf(0, 1))
	sent := make(chan bool)
	go func() { sent <- ps[1].Send(nil, msgOf(1, 2)) }()
	if got := ps[0].TakeBack(); len(got) != 1 {
		t.Fatalf("took back %v, want partition 0's offset 1", offsetsOf(got))
	}
	if !<-sent {
		t.Fatal("the waiting send failed")
	}
	a, b := <-o.C(), <-o.C()
	if a.Partition != 1 || a.Offset != 1 || b.Partition != 1 || b.Offset != 2 {
		t.Errorf("read %d/%d then %d/%d, want 1/1 then 1/2", a.Partition, a.Offset, b.Partition, b.Offset)
	}
}

// Send returns false once interrupt is closed while the channel is full.
func TestOutboxSendInterrupted(t *testing.T) {
	_, ps, _ := registered(1, 1)
	ps[0].TrySend(msgOf(0, 1))
	stop := make(chan struct{})
	close(stop)
	if ps[0].Send(stop, msgOf(0, 2)) {
		t.Fatal("a send into a full outbox succeeded after its interrupt")
	}
}

// Partitions' workers send while one of them takes its messages back again
// and again, and the application reads throughout. Every message sent is
// read, taken back by its partition, or dropped from a partition told it
// was overtaken, exactly one of the three; what the application reads of
// a partition never told is in order, and of one told, in order up to the
// first offset it was told. A take-back that let other senders in while
// it held the channel's contents, or put back an overtaken partition's
// messages, would break that.
func TestOutboxConcurrentTakeBacksKeepTheOtherPartitionsInOrder(t *testing.T) {
	const senders, perPartition = 3, 5000
	const taker = int32(senders) // the partition that takes back
	o, ps, ws := registered(16, senders+1)
	var mu sync.Mutex
	sent, back := map[*sarama.ConsumerMessage]bool{}, map[*sarama.ConsumerMessage]bool{}
	send := func(p *OutboxPart, m *sarama.ConsumerMessage) {
		mu.Lock()
		sent[m] = true
		mu.Unlock()
		if !p.Send(nil, m) {
			t.Error("a send without interrupt failed")
		}
	}
	var wg sync.WaitGroup
	for p := range int32(senders) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := range int64(perPartition) {
				send(ps[p], msgOf(p, off))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for off := range int64(perPartition) {
			send(ps[taker], msgOf(taker, off))
			if off%5 == 0 {
				got := ps[taker].TakeBack()
				mu.Lock()
				for _, m := range got {
					back[m] = true
				}
				mu.Unlock()
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var reads []*sarama.ConsumerMessage
	read := map[*sarama.ConsumerMessage]bool{}
	for running := true; running; {
		select {
		case m := <-o.C():
			reads = append(reads, m)
			read[m] = true
		case <-done:
			running = false
		}
	}
	for len(o.C()) > 0 {
		m := <-o.C()
		reads = append(reads, m)
		read[m] = true
	}
	if len(read) != len(reads) {
		t.Fatalf("%d reads of %d messages: some read twice", len(reads), len(read))
	}
	firstTold := map[int32]int64{}
	for p := range int32(senders) {
		if told := ws[p].told(); len(told) > 0 {
			firstTold[p] = int64(told[0])
		}
	}
	dropped := 0
	for m := range sent {
		switch {
		case read[m] && back[m]:
			t.Fatalf("%d/%d both read and taken back", m.Partition, m.Offset)
		case !read[m] && !back[m]:
			if _, told := firstTold[m.Partition]; !told {
				t.Fatalf("%d/%d neither read nor taken back, and its partition was never told", m.Partition, m.Offset)
			}
			dropped++
		}
	}
	next := make([]int64, senders)
	for _, m := range reads {
		if m.Partition == taker {
			continue
		}
		if f, told := firstTold[m.Partition]; told && m.Offset >= f {
			continue // the worker restarts below f: what it reads there is redelivered
		}
		if m.Offset != next[m.Partition] {
			t.Fatalf("partition %d: read offset %d, want %d", m.Partition, m.Offset, next[m.Partition])
		}
		next[m.Partition]++
	}
	t.Logf("%d reads, %d taken back, %d dropped from overtaken partitions (told: %v)", len(reads), len(back), dropped, firstTold)
}

func offsetsOf(ms []*sarama.ConsumerMessage) []int64 {
	var offs []int64
	for _, m := range ms {
		offs = append(offs, m.Offset)
	}
	return offs
}

// TakeBackAll empties the channel and tells every partition it took
// messages of, from its lowest offset.
func TestOutboxTakeBackAllTellsEveryPartition(t *testing.T) {
	o, ps, ws := registered(8, 3)
	for _, m := range []*sarama.ConsumerMessage{msgOf(0, 4), msgOf(1, 9), msgOf(0, 5)} {
		ps[m.Partition].TrySend(m)
	}
	if n := o.TakeBackAll(); n != 3 {
		t.Fatalf("took back %d, want 3", n)
	}
	if len(o.C()) != 0 {
		t.Fatalf("%d messages left", len(o.C()))
	}
	if a, b, c := ws[0].told(), ws[1].told(), ws[2].told(); fmt.Sprint(a, b, c) != "[4] [9] []" {
		t.Errorf("told %v, %v, %v; want [4], [9], nothing", a, b, c)
	}
}
