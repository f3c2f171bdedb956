package parallel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// randomSleeper returns an fn that records into rec and sleeps a
// pseudo-random 0-max, seeded by the offset so every run draws the same.
func randomSleeper(rec *recorder, maxSleep time.Duration) Func {
	return func(_ context.Context, msg *sarama.ConsumerMessage) error {
		rec.begin(msg)
		r := rand.New(rand.NewPCG(uint64(msg.Offset), 7))
		time.Sleep(time.Duration(r.Int64N(int64(maxSleep) + 1)))
		rec.end(msg, true)
		return nil
	}
}

// keysFrom returns n keys drawn from distinct ones, the share nilShare of
// them nil (""), from a fixed seed.
func keysFrom(n, distinct int, nilShare float64) []string {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	for i := range keys {
		if r.Float64() < nilShare {
			continue
		}
		keys[i] = fmt.Sprintf("k%d", r.IntN(distinct))
	}
	return keys
}

// TestPerKeyOrder: under random sleeps, fn sees every key's messages in
// offset order and never two of one key at once, with many keys, few
// keys, and messages without a key in order; every message is processed
// and the last one marked; no mark passes an unfinished message; at most
// MaxInFlight run at once.
func TestPerKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		distinct int
		nilShare float64
	}{
		{"many keys", 2000, 1000, 0},
		{"few keys", 2000, 3, 0},
		{"one key", 500, 1, 0}, // sequential: fewer, to stay fast
		{"nil keys in order", 2000, 50, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			rec := newRecorder()
			s := newFakeSession()
			s.finished = rec.isFinished
			c := newFakeClaim()
			h := NewHandler(randomSleeper(rec, 200*time.Microsecond), Config{MaxInFlight: 16})
			if err := h.Setup(s); err != nil {
				t.Fatal(err)
			}
			c.feed(keysFrom(n, tc.distinct, tc.nilShare), false, nil)
			errc := consume(h, s, c)
			// Closing the channel is a revoke, after which waiting
			// messages never start: close it once all are processed.
			wait(t, "every message processed", func() bool { return rec.countFinished() == n })
			close(c.msgs)
			if err := <-errc; err != nil {
				t.Fatalf("ConsumeClaim: %v", err)
			}
			s.check(t)
			if v := rec.violations(); v != 0 {
				t.Errorf("per-key order violations: %d, want 0", v)
			}
			if rec.overlaps != 0 {
				t.Errorf("two messages of one key ran at once %d times", rec.overlaps)
			}
			if got := rec.countFinished(); got != n {
				t.Errorf("processed %d messages, want %d", got, n)
			}
			if got := s.lastMark(); got != int64(n-1) {
				t.Errorf("last mark %d, want %d", got, n-1)
			}
			if rec.maxFlight > 16 {
				t.Errorf("%d messages ran at once, MaxInFlight is 16", rec.maxFlight)
			}
			if tc.distinct >= 1000 && rec.maxFlight < 2 {
				t.Errorf("with %d keys at most %d message ran at once: no concurrency", tc.distinct, rec.maxFlight)
			}
		})
	}
}

// TestNilKeyAnyOrder: messages without a key run concurrently under
// NilKeyAnyOrder, and are all processed and marked.
func TestNilKeyAnyOrder(t *testing.T) {
	const n = 8
	started := make(chan struct{}, n)
	release := make(chan struct{})
	fn := func(_ context.Context, msg *sarama.ConsumerMessage) error {
		started <- struct{}{}
		<-release
		return nil
	}
	s := newFakeSession()
	c := newFakeClaim()
	h := NewHandler(fn, Config{NilKey: NilKeyAnyOrder, MaxInFlight: n})
	c.feed(make([]string, n), true, nil)
	errc := consume(h, s, c)
	for range n { // every one starts while none has finished
		<-started
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := s.lastMark(); got != int64(n-1) {
		t.Errorf("last mark %d, want %d", got, n-1)
	}
}

// gate blocks fn for chosen offsets until released or fn's context ends.
type gate struct {
	mu    sync.Mutex
	gates map[int64]chan struct{}
}

func newGate(offsets ...int64) *gate {
	g := &gate{gates: map[int64]chan struct{}{}}
	for _, o := range offsets {
		g.gates[o] = make(chan struct{})
	}
	return g
}

// wait blocks for offset's gate; it returns ctx's error when ctx ends
// first.
func (g *gate) wait(ctx context.Context, offset int64) error {
	g.mu.Lock()
	ch := g.gates[offset]
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) open(offset int64) { close(g.gates[offset]) }

// gatedFn records into rec, and holds the gated offsets.
func gatedFn(rec *recorder, g *gate) Func {
	return func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		rec.begin(msg)
		err := g.wait(ctx, msg.Offset)
		rec.end(msg, err == nil)
		return err
	}
}

// TestContiguousPrefixMarking: a slow message holds back every mark past
// it while the messages after it finish; once it finishes, the marks jump
// to the last one.
func TestContiguousPrefixMarking(t *testing.T) {
	const n = 10
	rec := newRecorder()
	g := newGate(2)
	s := newFakeSession()
	s.finished = rec.isFinished
	c := newFakeClaim()
	h := NewHandler(gatedFn(rec, g), Config{})
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	c.feed(keys, false, nil)
	errc := consume(h, s, c)
	wait(t, "every message but 2 finished", func() bool { return rec.countFinished() == n-1 })
	if got := s.lastMark(); got != 1 {
		t.Errorf("with 2 unfinished the last mark is %d, want 1", got)
	}
	g.open(2)
	wait(t, "every message finished", func() bool { return rec.countFinished() == n })
	wait(t, "the last marked", func() bool { return s.lastMark() == n-1 })
	close(c.msgs)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := s.lastMark(); got != int64(n-1) {
		t.Errorf("last mark %d, want %d", got, n-1)
	}
	s.check(t)
}
