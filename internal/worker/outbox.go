package worker

import (
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// Outbox is a buffered channel that the workers of every partition share
// (a buffered Messages()), from which one partition's messages can be
// taken back. Each worker sends through its OutboxPart; the application
// reads C.
//
// A take-back must empty the whole channel while the application may be
// reading it, so the application can get a message of any partition that
// came after one the take-back holds. So a take-back stops every sender
// (nothing slips in between two messages already there), and then, for
// every other partition whose messages it took out, compares them with
// the offsets that partition sent last: if they are its last ones, the
// application got only messages before them, and they are put back in
// their order; if not, the application overtook one of them, and that
// partition is told: consuming, its worker restarts below them, as after
// a recall of its own; draining, its commits stay below them. Every other
// partition's commits are held back meanwhile: the
// application may mark a message it overtook. See docs/recall.md, "A
// shared buffer".
type Outbox struct {
	ch chan *sarama.ConsumerMessage
	// mu is held shared by each send attempt and alone by a take-back
	// while it moves the channel's contents.
	mu sync.RWMutex
	// parts are the registered partitions, under partsMu: not under mu,
	// which a send waiting for room holds until the application reads.
	partsMu sync.Mutex
	parts   map[TopicPartition]*OutboxPart
	// halt is closed when a take-back begins, so that sends waiting for
	// room give up mu; replaced, under mu, when it ends.
	halt chan struct{}
	// takeBack is held for a whole take-back: one at a time, and a sender
	// that saw halt waits on it rather than spin.
	takeBack sync.Mutex
	// orphans counts messages a take-back found of no registered
	// partition, and dropped (none should be: see Unregister).
	orphans int
}

// NewOutbox returns an outbox whose channel holds capacity messages
// (capacity > 0).
func NewOutbox(capacity int) *Outbox {
	return &Outbox{
		ch:    make(chan *sarama.ConsumerMessage, capacity),
		halt:  make(chan struct{}),
		parts: make(map[TopicPartition]*OutboxPart),
	}
}

// C is the channel the application reads. Only the outbox sends on it; its
// owner closes it once no worker sends any more.
func (o *Outbox) C() chan *sarama.ConsumerMessage { return o.ch }

// overtaker is what a take-back tells a partition whose messages the
// application overtook (the worker).
type overtaker interface {
	// holdCommits holds the partition's commits back until release.
	holdCommits() (release func())
	// takenBack hands over the partition's messages another take-back
	// took (lowest first): after the application got a later one of them
	// (overtaken), or all at once (TakeBackAll, a fence). last is the
	// offset the partition sent just before them when that is known and
	// the application got nothing after it (-1 otherwise). Called with
	// commits held.
	takenBack(ms []*sarama.ConsumerMessage, last int64)
}

// OutboxPart is one partition's way into an Outbox: its worker sends
// through it (it is the worker's fence.Outlet) and takes back through it.
type OutboxPart struct {
	o  *Outbox
	tp TopicPartition
	w  overtaker
	// sent holds the offsets of the last len(sent) messages sent, in a
	// ring of at most ringMax, grown as they come; n counts the sends
	// since it was last cleared. Written by the partition's worker under
	// o.mu shared, read under o.mu alone.
	sent []int64
	n    int
}

// Register returns tp's way into the outbox, for w. Its worker calls it
// when its partition opens, and Unregister once none of its messages can
// be in the channel any more.
func (o *Outbox) Register(tp TopicPartition, w overtaker) *OutboxPart {
	p := &OutboxPart{o: o, tp: tp, w: w}
	o.partsMu.Lock()
	o.parts[tp] = p
	o.partsMu.Unlock()
	return p
}

// Unregister ends what Register began. The worker calls it before the
// release, when its drain saw every message it sent read, or it took them
// back: a message of it that a take-back still finds is dropped.
func (p *OutboxPart) Unregister() {
	p.o.partsMu.Lock()
	if p.o.parts[p.tp] == p {
		delete(p.o.parts, p.tp)
	}
	p.o.partsMu.Unlock()
}

// ringMax bounds a partition's ring of last sends: more of one partition
// in the channel than that, and a take-back counts it as overtaken
// (delivered again from its mark), never as in order.
const ringMax = 1024

// record notes that m went into the channel. Called under o.mu shared.
func (p *OutboxPart) record(m *sarama.ConsumerMessage) {
	if len(p.sent) < min(ringMax, cap(p.o.ch)) {
		p.sent = append(p.sent, m.Offset)
	} else {
		p.sent[p.n%len(p.sent)] = m.Offset
	}
	p.n++
}

// clear forgets the sends so far: none of them is in the channel any
// more.
func (p *OutboxPart) clear() {
	p.n = 0
	p.sent = p.sent[:0]
}

// TrySend puts m in the channel if it has room (or a reader waits).
func (p *OutboxPart) TrySend(m *sarama.ConsumerMessage) bool {
	o := p.o
	o.mu.RLock()
	defer o.mu.RUnlock()
	select {
	case o.ch <- m:
		p.record(m)
		return true
	default:
		return false
	}
}

// Send puts m in the channel, waiting for room, and returns false, with m
// not sent, once interrupt is closed first. A take-back that begins
// meanwhile makes it wait for the take-back's end, then try again.
func (p *OutboxPart) Send(interrupt <-chan struct{}, m *sarama.ConsumerMessage) bool {
	o := p.o
	for {
		o.mu.RLock()
		halt := o.halt
		select {
		case o.ch <- m:
			p.record(m)
			o.mu.RUnlock()
			return true
		case <-interrupt:
			o.mu.RUnlock()
			return false
		case <-halt:
			o.mu.RUnlock()
			o.takeBack.Lock() // until the take-back ends
			o.takeBack.Unlock()
			select {
			case <-interrupt: // it may have told this partition it was overtaken
				return false
			default:
			}
		}
	}
}

// TakeBack takes every message of the partition out of the channel and
// returns them in their order, handling the other partitions' as the
// Outbox says. The caller is the partition's worker, not sending
// meanwhile; its own commits it holds back itself.
func (p *OutboxPart) TakeBack() []*sarama.ConsumerMessage {
	return p.o.takeBackOf(p)
}

// TakeBackAll takes every message out of the channel and hands each
// partition's to its worker (see overtaker.takenBack). It is for the
// group's Close, once the application stopped reading (or never will):
// every partition is stopping, and none need wait for its messages.
func (o *Outbox) TakeBackAll() int {
	return o.takeBackWith(nil, func(*OutboxPart, []*sarama.ConsumerMessage) bool { return false })
}

// TakeBackWhileUnread watches the channel until stop is called: once it
// has held the same number of messages, more than none, for patience
// (nobody reads it), it takes everything back (TakeBackAll) and calls
// taken with how many. stop ends the watch and waits for it.
func (o *Outbox) TakeBackWhileUnread(patience time.Duration, taken func(n int)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(patience / 8)
		defer tick.Stop()
		last, since := -1, time.Now()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			n := len(o.ch)
			if n != last || n == 0 {
				last, since = n, time.Now()
				continue
			}
			if time.Since(since) >= patience {
				taken(o.TakeBackAll())
				last, since = -1, time.Now()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// TakeBackAll is the Outbox's TakeBackAll with the partition's messages
// returned to its caller, its worker: for a pause of the delivery gate,
// which every partition takes, so one take-back serves them all.
func (p *OutboxPart) TakeBackAll() []*sarama.ConsumerMessage {
	var mine []*sarama.ConsumerMessage
	p.o.takeBackWith(p, func(q *OutboxPart, ms []*sarama.ConsumerMessage) bool {
		if q == p {
			mine = ms
		}
		return false
	})
	return mine
}

// takeBackOf is TakeBack for p.
func (o *Outbox) takeBackOf(p *OutboxPart) []*sarama.ConsumerMessage {
	var mine []*sarama.ConsumerMessage
	o.takeBackWith(p, func(q *OutboxPart, ms []*sarama.ConsumerMessage) bool {
		if q == p {
			mine = ms
			return false
		}
		return q.sentLast(ms)
	})
	return mine
}

// takeBackWith empties the channel with every sender held off and the
// commits of every partition but p held back, and hands each partition's
// messages to keep: those it keeps go back in, in their order; those of
// any partition but p it does not keep are dropped, and their partition
// told. It returns how many it did not put back.
func (o *Outbox) takeBackWith(p *OutboxPart, keep func(*OutboxPart, []*sarama.ConsumerMessage) bool) (taken int) {
	o.takeBack.Lock()
	defer o.takeBack.Unlock()
	if len(o.ch) == 0 {
		// None of p's can come in before we return: it does not send.
		if p != nil {
			p.clear()
		}
		return 0
	}
	close(o.halt)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partsMu.Lock()
	defer o.partsMu.Unlock()
	for _, q := range o.parts {
		if q != p {
			defer q.w.holdCommits()()
		}
	}
	var drained []*sarama.ConsumerMessage
	var owners []*OutboxPart // of drained
	byPart := make(map[*OutboxPart][]*sarama.ConsumerMessage)
	for more := true; more; {
		select {
		case m := <-o.ch:
			q := o.parts[TopicPartition{Topic: m.Topic, Partition: m.Partition}]
			drained, owners = append(drained, m), append(owners, q)
			byPart[q] = append(byPart[q], m)
		default:
			more = false
		}
	}
	putBack := make(map[*OutboxPart]bool)
	for q, ms := range byPart {
		switch {
		case q == nil:
			o.orphans += len(ms)
		case keep(q, ms):
			putBack[q] = true
		default:
			taken += len(ms)
			if q != p {
				last := int64(-1)
				if q.sentLast(ms) {
					last = q.sentBefore(len(ms))
				}
				q.w.takenBack(ms, last)
			}
			q.clear()
		}
	}
	for i, m := range drained {
		if putBack[owners[i]] {
			o.ch <- m // room: it was in it, and nobody else sends now
		}
	}
	if p != nil {
		p.clear()
	}
	o.halt = make(chan struct{})
	return taken
}

// sentLast reports whether ms, in their order, are the last messages the
// partition sent: then the application got none sent after the first of
// them. Called under o.mu alone.
func (p *OutboxPart) sentLast(ms []*sarama.ConsumerMessage) bool {
	k := len(ms)
	if k > len(p.sent) {
		return false
	}
	for i, m := range ms {
		if p.sent[(p.n-k+i)%len(p.sent)] != m.Offset {
			return false
		}
	}
	return true
}

// sentBefore returns the offset the partition sent just before its last k
// sends, or -1 when the ring no longer holds it (or there was none since
// it was cleared). Called under o.mu alone.
func (p *OutboxPart) sentBefore(k int) int64 {
	if k >= len(p.sent) {
		return -1
	}
	return p.sent[(p.n-k-1)%len(p.sent)]
}

// Discard empties the channel and returns how many messages it held, with
// the orphans takes-back dropped: for the group's Close, once no worker
// sends any more.
func (o *Outbox) Discard() int {
	o.takeBack.Lock()
	defer o.takeBack.Unlock()
	n := o.orphans
	for {
		select {
		case <-o.ch:
			n++
		default:
			return n
		}
	}
}
