package parallel

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// fakeSession is a sarama.ConsumerGroupSession that records marks and
// resets, and checks on every mark that each message up to it has
// finished (as the test's finished set says).
type fakeSession struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	marks    []int64 // offsets of the messages marked, in order
	resets   []int64 // ResetOffset's next offsets
	finished func(offset int64) bool
	badMarks []string
	claimed  bool  // Claims() lists partition t/0
	gen      int32 // GenerationID()
}

func newFakeSession() *fakeSession {
	ctx, cancel := context.WithCancel(context.Background())
	return &fakeSession{ctx: ctx, cancel: cancel}
}

func (s *fakeSession) MemberID() string { return "fake" }

// Claims lists t/0 while claimed.
func (s *fakeSession) Claims() map[string][]int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.claimed {
		return map[string][]int32{}
	}
	return map[string][]int32{"t": {0}}
}

func (s *fakeSession) GenerationID() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// drop ends the claim of t/0 as HandlerGroup does: it leaves Claims(),
// and the generation moves.
func (s *fakeSession) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimed = false
	s.gen++
}
func (s *fakeSession) MarkOffset(string, int32, int64, string) {
	panic("parallel marks messages, not offsets")
}
func (s *fakeSession) Commit()                  {}
func (s *fakeSession) Context() context.Context { return s.ctx }

func (s *fakeSession) ResetOffset(_ string, _ int32, offset int64, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets = append(s.resets, offset)
}

func (s *fakeSession) MarkMessage(msg *sarama.ConsumerMessage, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.marks); n > 0 && msg.Offset <= s.marks[n-1] {
		s.badMarks = append(s.badMarks, fmt.Sprintf("mark %d after %d", msg.Offset, s.marks[n-1]))
	}
	if s.finished != nil {
		for o := int64(0); o <= msg.Offset; o++ {
			if !s.finished(o) {
				s.badMarks = append(s.badMarks, fmt.Sprintf("mark %d while %d is unfinished", msg.Offset, o))
				break
			}
		}
	}
	s.marks = append(s.marks, msg.Offset)
}

// lastMark returns the highest offset marked, or -1.
func (s *fakeSession) lastMark() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.marks) == 0 {
		return -1
	}
	return s.marks[len(s.marks)-1]
}

func (s *fakeSession) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.badMarks {
		t.Error(b)
	}
}

// fakeClaim is a sarama.ConsumerGroupClaim whose channel is unbuffered
// and fed by feed, so the count of messages sent is the count read.
type fakeClaim struct {
	msgs chan *sarama.ConsumerMessage
	read atomic.Int64
}

func newFakeClaim() *fakeClaim {
	return &fakeClaim{msgs: make(chan *sarama.ConsumerMessage)}
}

func (c *fakeClaim) Topic() string                            { return "t" }
func (c *fakeClaim) Partition() int32                         { return 0 }
func (c *fakeClaim) InitialOffset() int64                     { return 0 }
func (c *fakeClaim) HighWaterMarkOffset() int64               { return 0 }
func (c *fakeClaim) Messages() <-chan *sarama.ConsumerMessage { return c.msgs }

// feed sends a message per key (offsets from 0; a "" key is nil) and
// closes the channel when close is set, unless stop is closed first.
// It returns when done.
func (c *fakeClaim) feed(keys []string, closeAfter bool, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, k := range keys {
			msg := &sarama.ConsumerMessage{Topic: "t", Offset: int64(i), Value: []byte(k)}
			if k != "" {
				msg.Key = []byte(k)
			}
			select {
			case c.msgs <- msg:
				c.read.Add(1)
			case <-stop:
				return
			}
		}
		if closeAfter {
			close(c.msgs)
		}
	}()
	return done
}

// consume runs h's ConsumeClaim on a goroutine; the channel returned
// carries its error.
func consume(h sarama.ConsumerGroupHandler, s *fakeSession, c *fakeClaim) <-chan error {
	out := make(chan error, 1)
	go func() { out <- h.ConsumeClaim(s, c) }()
	return out
}

// wait fails t unless cond holds within 10 s (a generous bound: these
// waits end within milliseconds unless something is wrong).
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recorder records what fn saw: per key the offsets in the order fn
// started them, overlaps of one key, and which offsets finished.
type recorder struct {
	mu        sync.Mutex
	order     map[string][]int64
	busy      map[string]bool
	overlaps  int
	started   map[int64]bool
	finished  map[int64]bool
	inFlight  int
	maxFlight int
}

func newRecorder() *recorder {
	return &recorder{order: map[string][]int64{}, busy: map[string]bool{}, started: map[int64]bool{}, finished: map[int64]bool{}}
}

func (r *recorder) begin(msg *sarama.ConsumerMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := string(msg.Key)
	if msg.Key == nil {
		k = "<nil>"
	}
	if r.busy[k] {
		r.overlaps++
	}
	r.busy[k] = true
	r.order[k] = append(r.order[k], msg.Offset)
	r.started[msg.Offset] = true
	r.inFlight++
	r.maxFlight = max(r.maxFlight, r.inFlight)
}

func (r *recorder) end(msg *sarama.ConsumerMessage, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := string(msg.Key)
	if msg.Key == nil {
		k = "<nil>"
	}
	r.busy[k] = false
	r.inFlight--
	if ok {
		r.finished[msg.Offset] = true
	}
}

func (r *recorder) isFinished(o int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished[o]
}

func (r *recorder) isStarted(o int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[o]
}

func (r *recorder) countFinished() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.finished)
}

// violations counts, over every key, the messages fn started before an
// earlier offset of the same key (or twice).
func (r *recorder) violations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, offs := range r.order {
		for i := 1; i < len(offs); i++ {
			if offs[i] <= offs[i-1] {
				n++
			}
		}
	}
	return n
}
