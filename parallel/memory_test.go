package parallel

import (
	"fmt"
	"testing"
	"time"
)

// TestBoundedMemoryStalledKey: with one message stalled, the claim reads
// at most MaxInFlight messages (the stalled one, and those after it,
// finished or not), however many others are ready, with other keys or its
// own; once it finishes, everything flows and is marked.
func TestBoundedMemoryStalledKey(t *testing.T) {
	for _, same := range []bool{false, true} {
		t.Run(fmt.Sprintf("same key %v", same), func(t *testing.T) {
			const n, maxInFlight = 1000, 8
			rec := newRecorder()
			g := newGate(0)
			s := newFakeSession()
			s.finished = rec.isFinished
			c := newFakeClaim()
			h := NewHandler(gatedFn(rec, g), Config{MaxInFlight: maxInFlight})
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprint("k", i)
				if same {
					keys[i] = "stalled"
				}
			}
			c.feed(keys, false, nil)
			errc := consume(h, s, c)
			wait(t, "the window full", func() bool { return c.read.Load() == maxInFlight })
			if !same {
				wait(t, "the others finished", func() bool { return rec.countFinished() == maxInFlight-1 })
			}
			time.Sleep(20 * time.Millisecond) // room for a read too many
			if got := c.read.Load(); got != maxInFlight {
				t.Errorf("%d messages read with 0 stalled, want %d (MaxInFlight)", got, maxInFlight)
			}
			if got := s.lastMark(); got != -1 {
				t.Errorf("marked %d while 0 is unfinished", got)
			}
			g.open(0)
			wait(t, "all marked", func() bool { return s.lastMark() == n-1 })
			close(c.msgs)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			s.check(t)
			if v := rec.violations(); v != 0 {
				t.Errorf("per-key order violations: %d", v)
			}
		})
	}
}
