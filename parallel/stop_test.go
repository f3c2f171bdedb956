package parallel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v4"
)

// TestRevokeMidRun: once the channel closes, no new work starts (a message
// waiting behind its key never starts, even once its key is free), work
// in flight gets the drain, marks stop at the first unfinished message,
// fn's context is cancelled after DrainTimeout, and the position handed
// back is the first unfinished message.
func TestRevokeMidRun(t *testing.T) {
	for _, how := range []string{"channel closed", "session context ended"} {
		t.Run(how, func(t *testing.T) {
			rec := newRecorder()
			g := newGate(1, 3)
			s := newFakeSession()
			s.finished = rec.isFinished
			c := newFakeClaim()
			h := NewHandler(gatedFn(rec, g), Config{DrainTimeout: 300 * time.Millisecond})
			// 0 finishes; 1 (B) is held to the end; 2 (B) waits behind it;
			// 3 (C) is held until the drain, 5 (C) waits behind it; 4 (D)
			// finishes.
			stopFeed := make(chan struct{})
			c.feed([]string{"A", "B", "B", "C", "D", "C"}, false, stopFeed)
			errc := consume(h, s, c)
			wait(t, "0 and 4 finished, 1 and 3 running", func() bool {
				return rec.isFinished(0) && rec.isFinished(4) && rec.isStarted(1) && rec.isStarted(3) && c.read.Load() == 6
			})
			if how == "channel closed" {
				close(c.msgs)
			} else {
				s.cancel()
			}
			select {
			case err := <-errc:
				t.Fatalf("ConsumeClaim returned (%v) while 3 ran and the drain had time left", err)
			case <-time.After(50 * time.Millisecond):
			}
			g.open(3)
			if err := <-errc; err != nil {
				t.Fatalf("ConsumeClaim: %v", err)
			}
			close(stopFeed)
			if rec.isStarted(2) || rec.isStarted(5) {
				t.Error("2 or 5, waiting behind 1 or 3, started after the claim stopped")
			}
			if !rec.isFinished(3) {
				t.Error("3 did not finish in the drain")
			}
			if rec.isFinished(1) {
				t.Error("1 finished although its gate never opened: fn's context was not cancelled")
			}
			if got := s.lastMark(); got != 0 {
				t.Errorf("last mark %d, want 0 (1 is unfinished)", got)
			}
			if len(s.resets) != 1 || s.resets[0] != 1 {
				t.Errorf("ResetOffset calls %v, want [1]: the first unfinished message", s.resets)
			}
			s.check(t)
		})
	}
}

// TestNoWorkAfterSessionEnd: once the session's context is done, nothing
// more is read from the channel.
func TestNoWorkAfterSessionEnd(t *testing.T) {
	rec := newRecorder()
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(randomSleeper(rec, 0), Config{})
	stop := make(chan struct{})
	defer close(stop)
	c.feed([]string{"a", "b"}, false, stop)
	errc := consume(h, s, c)
	wait(t, "both processed", func() bool { return rec.countFinished() == 2 })
	s.cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	read := c.read.Load()
	c.feed([]string{"c"}, false, stop) // nobody reads it
	time.Sleep(20 * time.Millisecond)
	if got := c.read.Load(); got != read {
		t.Errorf("%d messages read after ConsumeClaim returned", got-read)
	}
}

// failing returns an fn that fails the first failures attempts of offset
// bad with err and counts the attempts of each offset.
func failing(bad int64, failures int, err error) (Func, func(int64) int) {
	var mu sync.Mutex
	attempts := map[int64]int{}
	fn := func(_ context.Context, msg *sarama.ConsumerMessage) error {
		mu.Lock()
		defer mu.Unlock()
		attempts[msg.Offset]++
		if msg.Offset == bad && attempts[msg.Offset] <= failures {
			return err
		}
		return nil
	}
	return fn, func(o int64) int { mu.Lock(); defer mu.Unlock(); return attempts[o] }
}

var fastRetry = Retry{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond, MaxAttempts: 3}

// TestRetryThenSucceed: a message that fails twice and then succeeds is
// marked, with three attempts.
func TestRetryThenSucceed(t *testing.T) {
	fn, attempts := failing(1, 2, errors.New("boom"))
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(fn, Config{Retry: fastRetry})
	c.feed([]string{"a", "b", "c"}, false, nil)
	errc := consume(h, s, c)
	wait(t, "all marked", func() bool { return s.lastMark() == 2 })
	close(c.msgs)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := attempts(1); got != 3 {
		t.Errorf("%d attempts, want 3", got)
	}
}

// TestRetryThenStop: a message whose retries are exhausted stops the
// claim under FailureStop: ConsumeClaim returns a *MessageError naming it
// while the channel is still open, and nothing at or past it is marked.
func TestRetryThenStop(t *testing.T) {
	boom := errors.New("boom")
	fn, attempts := failing(1, 100, boom)
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(fn, Config{Retry: fastRetry})
	stop := make(chan struct{})
	defer close(stop)
	c.feed([]string{"a", "b", "c", "d"}, false, stop)
	err := <-consume(h, s, c)
	var me *MessageError
	if !errors.As(err, &me) || me.Offset != 1 || me.Attempts != 3 || !errors.Is(err, boom) {
		t.Fatalf("ConsumeClaim: %v, want a *MessageError for offset 1 after 3 attempts wrapping boom", err)
	}
	if got := attempts(1); got != 3 {
		t.Errorf("%d attempts, want 3", got)
	}
	if got := s.lastMark(); got > 0 {
		t.Errorf("last mark %d: past the failed message 1", got)
	}
	if len(s.resets) != 1 || s.resets[0] != 1 {
		t.Errorf("ResetOffset calls %v, want [1]", s.resets)
	}
}

// TestPermanentStopsRetries: a backoff.Permanent error is not retried.
func TestPermanentStopsRetries(t *testing.T) {
	fn, attempts := failing(0, 100, backoff.Permanent(errors.New("bad message")))
	s := newFakeSession()
	c := newFakeClaim()
	stop := make(chan struct{})
	defer close(stop)
	c.feed([]string{"a"}, false, stop)
	var me *MessageError
	if err := <-consume(NewHandler(fn, Config{Retry: fastRetry}), s, c); !errors.As(err, &me) || me.Attempts != 1 {
		t.Fatalf("ConsumeClaim: %v, want a *MessageError after 1 attempt", err)
	}
	if got := attempts(0); got != 1 {
		t.Errorf("%d attempts, want 1", got)
	}
}

// TestRetryThenSkip: under FailureSkip, a message whose retries are
// exhausted goes to OnSkip once, and marks move past it.
func TestRetryThenSkip(t *testing.T) {
	boom := errors.New("boom")
	fn, attempts := failing(1, 100, boom)
	var skipped []int64
	var skipErr error
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(fn, Config{Retry: fastRetry, OnFailure: FailureSkip, OnSkip: func(msg *sarama.ConsumerMessage, err error) {
		skipped = append(skipped, msg.Offset) // on the claim's goroutine
		skipErr = err
	}})
	c.feed([]string{"a", "b", "c", "d"}, false, nil)
	errc := consume(h, s, c)
	wait(t, "all marked", func() bool { return s.lastMark() == 3 })
	close(c.msgs)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != 1 || !errors.Is(skipErr, boom) {
		t.Errorf("OnSkip got %v (%v), want [1] (boom)", skipped, skipErr)
	}
	if got := attempts(1); got != 3 {
		t.Errorf("%d attempts, want 3", got)
	}
	if len(s.resets) != 0 {
		t.Errorf("ResetOffset called (%v) with nothing unfinished", s.resets)
	}
}

// TestStopEndsRetries: a message between attempts when the claim stops is
// not tried again, nor skipped: it stays unfinished.
func TestStopEndsRetries(t *testing.T) {
	fn, attempts := failing(0, 100, errors.New("boom"))
	skips := 0
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(fn, Config{Retry: Retry{InitialInterval: time.Hour, MaxInterval: time.Hour}, OnFailure: FailureSkip,
		OnSkip: func(*sarama.ConsumerMessage, error) { skips++ }})
	c.feed([]string{"a"}, false, nil)
	errc := consume(h, s, c)
	wait(t, "the first attempt", func() bool { return attempts(0) == 1 })
	close(c.msgs)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := attempts(0); got != 1 || skips != 0 {
		t.Errorf("%d attempts, %d skips after the claim stopped; want 1 and 0", got, skips)
	}
	if s.lastMark() != -1 || len(s.resets) != 1 || s.resets[0] != 0 {
		t.Errorf("marks %v, resets %v; want none and [0]", s.marks, s.resets)
	}
}

// TestRevokeWithFullWindow: a claim whose window is full behind a stalled
// message does not read its channel, so it cannot see the channel close
// behind the messages it buffers; it sees the revoke when the session
// stops listing the claim (as HandlerGroup's does), drains, cancels the
// stalled message after DrainTimeout, and returns without reading the
// buffer.
func TestRevokeWithFullWindow(t *testing.T) {
	rec := newRecorder()
	g := newGate(0)
	s := newFakeSession()
	s.claimed = true
	c := &fakeClaim{msgs: make(chan *sarama.ConsumerMessage, 4)}
	h := NewHandler(gatedFn(rec, g), Config{MaxInFlight: 2, DrainTimeout: 50 * time.Millisecond})
	h.(*handler).claimPoll = time.Millisecond
	errc := consume(h, s, c)
	c.msgs <- &sarama.ConsumerMessage{Topic: "t", Offset: 0, Key: []byte("A")}
	c.msgs <- &sarama.ConsumerMessage{Topic: "t", Offset: 1, Key: []byte("B")}
	wait(t, "0 running and 1 finished: the window full", func() bool { return rec.isStarted(0) && rec.isFinished(1) })
	for o := int64(2); o < 6; o++ {
		c.msgs <- &sarama.ConsumerMessage{Topic: "t", Offset: o, Key: []byte("C")}
	}
	close(c.msgs)
	s.drop()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ConsumeClaim: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ConsumeClaim did not return within 10s of the revoke: the stalled message held it")
	}
	if len(c.msgs) != 4 {
		t.Errorf("%d buffered messages left, want 4: read after the revoke", len(c.msgs))
	}
	if rec.isFinished(0) {
		t.Error("0 finished: its context was not cancelled")
	}
	if len(s.resets) != 1 || s.resets[0] != 0 {
		t.Errorf("ResetOffset calls %v, want [0]", s.resets)
	}
}

// TestDefaultRetryTimes: with the default Retry (5 attempts, from 100 ms,
// ×1.5 ±50 %, capped at 5 s), a failing message is tried 5 times over
// about 0.8 s (between 0.4 and 1.2 s of backoff) before the claim stops.
// It runs on synctest's fake clock, so it does not sleep.
func TestDefaultRetryTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn, attempts := failing(0, 100, errors.New("boom"))
		s := newFakeSession()
		c := newFakeClaim()
		stop := make(chan struct{})
		defer close(stop)
		c.feed([]string{"a"}, false, stop)
		start := time.Now()
		err := <-consume(NewHandler(fn, Config{}), s, c)
		elapsed := time.Since(start)
		var me *MessageError
		if !errors.As(err, &me) || me.Attempts != DefaultRetryMaxAttempts {
			t.Fatalf("ConsumeClaim: %v, want a *MessageError after %d attempts", err, DefaultRetryMaxAttempts)
		}
		if got := attempts(0); got != DefaultRetryMaxAttempts {
			t.Errorf("%d attempts, want %d", got, DefaultRetryMaxAttempts)
		}
		// The 4 waits: 100, 150, 225, 337.5 ms, each ±50 %.
		if elapsed < 400*time.Millisecond || elapsed > 1220*time.Millisecond {
			t.Errorf("retries took %v of fake time, want 0.4-1.2 s", elapsed)
		}
	})
}
