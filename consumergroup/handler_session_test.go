package consumergroup

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"testing/synctest"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// recordingHandler is a handler whose ConsumeClaim hands each claim and
// message to the test, marks every message, and returns when Messages()
// closes, or at once with err when exitEarly is set.
type recordingHandler struct {
	claims    chan sarama.ConsumerGroupClaim
	got       chan *sarama.ConsumerMessage
	returned  chan struct{}
	exitEarly bool
	err       error
}

func newRecordingHandler() *recordingHandler {
	return &recordingHandler{
		claims:   make(chan sarama.ConsumerGroupClaim, 8),
		got:      make(chan *sarama.ConsumerMessage, 8),
		returned: make(chan struct{}, 8),
	}
}

func (h *recordingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *recordingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *recordingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	defer func() { h.returned <- struct{}{} }()
	h.claims <- c
	if h.exitEarly {
		return h.err
	}
	for m := range c.Messages() {
		s.MarkMessage(m, "")
		h.got <- m
	}
	return h.err
}

// newTestSession is a session over an offset manager with nothing behind
// it: no ZooKeeper, no commit loop.
func newTestSession(h sarama.ConsumerGroupHandler) (*handlerSession, *HandlerGroup) {
	cg := &ConsumerGroup{
		log:      slog.New(slog.DiscardHandler),
		config:   NewConfig(),
		instance: &kazoo.ConsumergroupInstance{ID: "member-1"},
	}
	cg.offsetManager = newOffsetManager(cg, &OffsetManagerConfig{})
	g := &HandlerGroup{name: "g", config: cg.config, errors: make(chan error, 8), closing: make(chan struct{})}
	s := newHandlerSession(context.Background(), g, h)
	s.cg = cg
	return s, g
}

// testWorker is a worker of s's group for tp that has not started.
func (s *handlerSession) testWorker(tp topicPartition) *worker.Worker {
	return worker.New(s.cg.workerConfig(), s.cg.workerDeps(), worker.TopicPartition(tp))
}

// openOut is Open's channel.
func (s *handlerSession) openOut(w *worker.Worker, owned *offsets.Partition, next int64) chan *sarama.ConsumerMessage {
	out, _ := s.Open(w, owned, next)
	return out
}

// adoptAt starts tracking tp for w at next, no offset node stored.
func (om *offsetManager) adoptAt(tp topicPartition, c *kazoo.PartitionClaim, next int64, w *worker.Worker) *offsets.Partition {
	return om.Adopt(offsets.TopicPartition(tp), c, offsets.Stored{ZkNext: next, ZkVersion: -1, KafkaNext: -1}, w)
}

// A claim starts only after Setup, gets its own channel read by its own
// ConsumeClaim, and ends when its worker closes it: ConsumeClaim returns,
// and the session goes on. Claims and GenerationID follow.
func TestHandlerSessionClaimLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRecordingHandler()
		s, _ := newTestSession(h)
		tp := topicPartition{"t", 3}
		w := s.testWorker(tp)
		defer w.Stop(false)
		owned := s.cg.offsetManager.adoptAt(tp, nil, 40, w)

		opened := make(chan chan *sarama.ConsumerMessage, 1)
		go func() { opened <- s.openOut(w, owned, 40) }()
		synctest.Wait()
		if len(opened) != 0 || len(h.claims) != 0 {
			t.Fatal("a claim started before Setup returned")
		}
		if got := s.Claims(); len(got) != 0 {
			t.Fatalf("Claims() before Setup returned = %v, want none", got)
		}
		if s.GenerationID() != 1 {
			t.Fatalf("GenerationID() at Setup = %d, want 1", s.GenerationID())
		}

		close(s.setupDone)
		out := <-opened
		if out == nil {
			t.Fatal("open refused after Setup")
		}
		c := <-h.claims
		if c.Topic() != "t" || c.Partition() != 3 || c.InitialOffset() != 40 {
			t.Errorf("claim %s/%d from %d, want t/3 from 40", c.Topic(), c.Partition(), c.InitialOffset())
		}
		if got, want := s.Claims(), map[string][]int32{"t": {3}}; !reflect.DeepEqual(got, want) {
			t.Errorf("Claims() = %v, want %v", got, want)
		}
		if s.GenerationID() != 2 {
			t.Errorf("GenerationID() after a claim started = %d, want 2", s.GenerationID())
		}

		// The worker's hand-over goes to this claim's channel; the mark
		// goes to its tracker.
		owned.Offer(40)
		out <- &sarama.ConsumerMessage{Topic: "t", Partition: 3, Offset: 40}
		owned.Delivered(40)
		if m := <-h.got; m.Offset != 40 {
			t.Fatalf("ConsumeClaim got offset %d, want 40", m.Offset)
		}
		if next, dirty := owned.Tracker.Pending(); next != 41 || !dirty {
			t.Errorf("after MarkMessage: Pending() = %d, %v; want 41, true", next, dirty)
		}

		s.Close(w)
		<-h.returned
		synctest.Wait()
		if err := context.Cause(s.ctx); err != nil {
			t.Errorf("the session ended when a claim was closed: %v", err)
		}
		if got := s.Claims(); len(got) != 0 {
			t.Errorf("Claims() after the claim ended = %v, want none", got)
		}
		if s.GenerationID() != 3 {
			t.Errorf("GenerationID() after the claim ended = %d, want 3", s.GenerationID())
		}
	})
}

// A sarama claim for a partition with no stored offset reports
// Offsets.Initial as its initial offset.
func TestHandlerClaimInitialOffsetWithoutCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRecordingHandler()
		s, _ := newTestSession(h)
		s.cg.config.Offsets.Initial = sarama.OffsetNewest
		close(s.setupDone)
		w := s.testWorker(topicPartition{"t", 0})
		defer w.Stop(false)
		out := s.openOut(w, nil, -1)
		if c := <-h.claims; c.InitialOffset() != sarama.OffsetNewest {
			t.Errorf("InitialOffset() = %d, want sarama.OffsetNewest", c.InitialOffset())
		}
		_ = out
		s.Close(w)
		<-h.returned
	})
}

// A ConsumeClaim that returns while its claim runs ends the session, as
// under sarama, and the error it returned goes to Errors().
func TestHandlerSessionClaimExitEndsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRecordingHandler()
		h.exitEarly, h.err = true, errors.New("boom")
		s, g := newTestSession(h)
		close(s.setupDone)
		w := s.testWorker(topicPartition{"t", 1})
		defer w.Stop(false)
		if s.openOut(w, nil, 0) == nil {
			t.Fatal("open refused")
		}
		<-h.returned
		synctest.Wait()
		if cause := context.Cause(s.ctx); !errors.Is(cause, sarama.ErrSessionConsumeClaimExited) {
			t.Errorf("session cause = %v, want sarama.ErrSessionConsumeClaimExited", cause)
		}
		select {
		case err := <-g.errors:
			var pe *PartitionError
			if !errors.As(err, &pe) || pe.Topic != "t" || pe.Partition != 1 || !errors.Is(err, h.err) {
				t.Errorf("reported %v, want a *PartitionError for t/1 wrapping %v", err, h.err)
			}
		default:
			t.Error("ConsumeClaim's error was not reported")
		}
		s.Close(w) // the worker still closes its channel when it stops
	})
}

// open gives up without starting a claim when the worker is stopped or its
// claim lost while it waits for Setup, or when the session is ending.
func TestHandlerSessionOpenRefused(t *testing.T) {
	cases := []struct {
		name  string
		event func(s *handlerSession, w *worker.Worker)
	}{
		{"worker stopped", func(_ *handlerSession, w *worker.Worker) { w.Stop(false) }},
		{"claim lost", func(_ *handlerSession, w *worker.Worker) { w.CommitResult(offsets.CommitResult{Lost: true}) }},
		{"session ending", func(s *handlerSession, _ *worker.Worker) {
			s.mu.Lock()
			s.ending = true
			s.mu.Unlock()
			close(s.setupDone)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newRecordingHandler()
				s, _ := newTestSession(h)
				w := s.testWorker(topicPartition{"t", 0})
				defer w.Stop(false)
				opened := make(chan chan *sarama.ConsumerMessage, 1)
				go func() { opened <- s.openOut(w, nil, 0) }()
				synctest.Wait()
				c.event(s, w)
				if out := <-opened; out != nil {
					t.Fatal("open returned a channel")
				}
				synctest.Wait()
				if len(h.claims) != 0 || len(s.Claims()) != 0 {
					t.Error("a claim started")
				}
			})
		})
	}
}

// MarkOffset takes sarama's next-offset convention; marks of partitions not
// claimed here are ignored; ResetOffset moves the mark back only.
func TestHandlerSessionMarks(t *testing.T) {
	s, _ := newTestSession(newRecordingHandler())
	tp := topicPartition{"t", 0}
	w := s.testWorker(tp)
	defer w.Stop(false)
	owned := s.cg.offsetManager.adoptAt(tp, nil, 10, w)
	for o := int64(10); o < 20; o++ {
		owned.Offer(o)
		owned.Delivered(o)
	}
	check := func(what string, want int64, wantDirty bool) {
		t.Helper()
		if next, dirty := owned.Tracker.Pending(); next != want || dirty != wantDirty {
			t.Fatalf("after %s: Pending() = %d, %v; want %d, %v", what, next, dirty, want, wantDirty)
		}
	}

	s.MarkOffset("t", 0, 13, "meta")
	check("MarkOffset(13)", 13, true)
	s.MarkMessage(&sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: 15}, "")
	check("MarkMessage(15)", 16, true)
	s.MarkOffset("t", 0, 25, "") // 24 was never offered
	check("MarkOffset beyond what was delivered", 16, true)
	s.MarkOffset("t", 1, 5, "")
	s.MarkMessage(&sarama.ConsumerMessage{Topic: "u", Partition: 0, Offset: 5}, "")
	s.MarkMessage(nil, "")
	check("marks of partitions not claimed here", 16, true)

	s.ResetOffset("t", 0, 18, "") // forward: refused, as sarama
	check("ResetOffset forward", 16, true)
	s.ResetOffset("t", 0, 7, "") // below the stored 10: allowed
	check("ResetOffset(7)", 7, true)
	owned.Tracker.Committed(7)
	check("committing the reset", 7, false)
	s.MarkMessage(&sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: 11}, "")
	check("a mark after the reset", 12, true)

	owned.SetLost()
	s.ResetOffset("t", 0, 8, "")
	check("ResetOffset after the claim was lost", 12, true)
}

// contextHandler is a handler as sarama's example writes it, in the one
// interleaving that matters here: it reads and marks one message, then
// sees the session's context end and returns, leaving the rest of its
// claim's buffer unread.
type contextHandler struct{ got chan int64 }

func (h *contextHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *contextHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *contextHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	m := <-c.Messages()
	s.MarkMessage(m, "")
	h.got <- m.Offset
	<-s.Context().Done()
	return nil
}

// Once ConsumeClaim has returned, nobody reads what its claim's buffer
// still holds: Open's readerGone closes, with the rest of the buffer
// unread, so the worker's drain takes it back rather than waiting
// Offsets.ProcessingTimeout for marks that cannot come (the worker's side:
// internal/worker's TestDrainAfterTheReaderIsGoneTakesBackTheBuffer).
func TestReaderGoneOnceConsumeClaimReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &contextHandler{got: make(chan int64, 1)}
		s, _ := newTestSession(h)
		close(s.setupDone)
		tp := topicPartition{"t", 0}
		w := s.testWorker(tp)
		defer w.Stop(false)
		owned := s.cg.offsetManager.adoptAt(tp, nil, 0, w)
		out, gone := s.Open(w, owned, 0)
		if out == nil || gone == nil {
			t.Fatal("open refused, or no reader's end to watch")
		}
		for o := int64(0); o < 5; o++ {
			owned.Offer(o)
			out <- &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: o}
			owned.Delivered(o)
		}
		if got := <-h.got; got != 0 {
			t.Fatalf("the handler got %d first, want 0", got)
		}
		synctest.Wait()
		select {
		case <-gone:
			t.Fatal("reader gone while ConsumeClaim runs")
		default:
		}
		s.cancel(context.Canceled) // the session ends: ConsumeClaim returns
		synctest.Wait()
		select {
		case <-gone:
		default:
			t.Fatal("ConsumeClaim returned, but the reader is not gone")
		}
		if n := len(out); n != 4 {
			t.Errorf("buffer holds %d messages, want the 4 the handler never read", n)
		}
		s.Close(w)
	})
}

// sessionHandler hands the session each ConsumeClaim is given to the
// test, and returns once that session's context ends.
type sessionHandler struct {
	sessions chan sarama.ConsumerGroupSession
}

func (h *sessionHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *sessionHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *sessionHandler) ConsumeClaim(s sarama.ConsumerGroupSession, _ sarama.ConsumerGroupClaim) error {
	h.sessions <- s
	<-s.Context().Done()
	return nil
}

// Each ConsumeClaim's session has a Done channel of its own (claims'
// goroutines select on it beside every message), which the session's end
// closes, with the session's cause; the rest of the session is the
// session's.
func TestHandlerClaimSessionContextEndsWithTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sessionHandler{sessions: make(chan sarama.ConsumerGroupSession, 2)}
		s, _ := newTestSession(h)
		close(s.setupDone)
		var seen []sarama.ConsumerGroupSession
		for p := range int32(2) {
			w := s.testWorker(topicPartition{"t", p})
			defer w.Stop(false)
			if s.openOut(w, nil, 0) == nil {
				t.Fatal("open refused")
			}
			seen = append(seen, <-h.sessions)
		}
		if seen[0].Context().Done() == seen[1].Context().Done() || seen[0].Context().Done() == s.ctx.Done() {
			t.Error("claims share a Done channel")
		}
		if seen[0].MemberID() != "member-1" || seen[0].GenerationID() != s.GenerationID() {
			t.Errorf("claim session: member %q, generation %d; want the session's", seen[0].MemberID(), seen[0].GenerationID())
		}
		synctest.Wait()
		for _, cs := range seen {
			if cs.Context().Err() != nil {
				t.Fatal("a claim's context ended while the session runs")
			}
		}
		s.cancel(sarama.ErrClosedConsumerGroup)
		s.running.Wait() // both ConsumeClaims returned: their Done channels closed
		for _, cs := range seen {
			if cause := context.Cause(cs.Context()); !errors.Is(cause, sarama.ErrClosedConsumerGroup) {
				t.Errorf("claim context cause %v, want the session's", cause)
			}
		}
	})
}
