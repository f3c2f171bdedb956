package claim

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// leakConfig runs out of budget quickly, so that many Keep rounds fit in a
// test: each round is 150ms of fake time and a 1ms cool-down.
func leakConfig() *Config {
	c := testConfig()
	c.ProcessingTimeout = 100 * time.Millisecond
	c.ExtraTime = 50 * time.Millisecond
	c.ExtraAttempts = 1
	c.InitialInterval = 10 * time.Millisecond
	c.MaxInterval = 50 * time.Millisecond
	c.RetryCooldown = time.Millisecond
	return c
}

// roundSample is what one failed claim round leaves behind.
type roundSample struct {
	armed      int // watches set and not fired
	goroutines int
}

// checkFlat fails unless at most one watch was armed after every round and
// the goroutine count did not grow with the rounds.
func checkFlat(t *testing.T, samples []roundSample) {
	t.Helper()
	for i, s := range samples {
		if s.armed > 1 {
			t.Errorf("round %d: %d watches armed on the owner node, want at most 1", i+1, s.armed)
			break
		}
	}
	first, last := samples[0], samples[len(samples)-1]
	if grown := last.goroutines - first.goroutines; grown > 2 {
		t.Errorf("goroutines grew by %d over %d rounds (%d -> %d), want flat",
			grown, len(samples), first.goroutines, last.goroutines)
	}
}

// A partition held elsewhere for a long time: every round of Keep (and
// every separate Claim) ends on the budget and starts again, while the owner
// node never changes. The watch armed on the owner node in the first round
// has not fired, so no later round arms another: each armed watch costs a
// registration in the ZooKeeper client and a goroutine in package kazoo
// until the node changes. When the owner does change the watch fires, and
// the next round arms exactly one new watch.
func TestWatchReusedAcrossRounds(t *testing.T) {
	const rounds, ownerChangesAt = 100, 50

	t.Run("Keep rounds", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSim(t)
			s.forward = true
			a := s.mustClaim(t, "A")
			c := newClaimer(t, s.as("B"), leakConfig())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var samples []roundSample
			onFailure := func(*Error) {
				samples = append(samples, roundSample{s.armed(), runtime.NumGoroutine()})
				switch len(samples) {
				case ownerChangesAt: // A hands over to C during the cool-down
					if err := s.as("A").Release(context.Background(), a); err != nil {
						t.Errorf("A's release: %v", err)
					}
					s.mustClaim(t, "C")
				case rounds:
					cancel()
				}
			}
			_, err := c.Keep(ctx, testTopic, testPartition, onFailure)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Keep = %v, want context.Canceled", err)
			}
			checkFlat(t, samples)
			if n := s.armCount(); n != 2 {
				t.Errorf("%d watches armed over %d rounds, want 2 (one per owner)", n, rounds)
			}
			st := c.Stats()
			t.Logf("%d rounds: %d watches armed in all; goroutines %d -> %d; %+v",
				len(samples), s.armCount(), samples[0].goroutines, samples[len(samples)-1].goroutines, st)
			s.close()
			s.endSession() // the watch still armed ends with the session
		})
	})

	t.Run("separate Claims", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSim(t)
			s.forward = true
			s.mustClaim(t, "A")
			c := newClaimer(t, s.as("B"), leakConfig())
			var samples []roundSample
			for range rounds {
				_, err := c.Claim(t.Context(), testTopic, testPartition)
				var ce *Error
				if !errors.As(err, &ce) || !IsRetryable(err) {
					t.Fatalf("Claim = %v, want a retryable *Error", err)
				}
				samples = append(samples, roundSample{s.armed(), runtime.NumGoroutine()})
			}
			checkFlat(t, samples)
			if n := s.armCount(); n != 1 {
				t.Errorf("%d watches armed over %d Claims, want 1", n, rounds)
			}
			s.close()
			s.endSession()
		})
	})
}

// A watch that fired while nobody was waiting on it (between two rounds) is
// not reused: the next round arms a new one and is woken by it.
func TestFiredWatchIsReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSim(t)
		a := s.mustClaim(t, "A")
		c := newClaimer(t, s.as("B"), leakConfig())
		if _, err := c.Claim(t.Context(), testTopic, testPartition); !IsRetryable(err) {
			t.Fatalf("first Claim = %v, want a retryable failure", err)
		}
		// A hands over to C between our Claims: our watch fires unobserved.
		if err := s.as("A").Release(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		c2 := s.mustClaim(t, "C")
		released := s.releaseAfter(75*time.Millisecond, c2) // between two backoff ticks
		pc, err := c.Claim(t.Context(), testTopic, testPartition)
		s.close()
		if err != nil {
			t.Fatalf("second Claim: %v", err)
		}
		if err := <-released; err != nil {
			t.Fatal(err)
		}
		if pc.InstanceID != "B" {
			t.Fatalf("claim %v, want B's", pc)
		}
		if gap := s.claimedAt["B"].Sub(s.releasedAt); gap != 0 {
			t.Errorf("claimed %v after C's release, want 0 (woken by a new watch)", gap)
		}
		if n := s.armCount(); n != 2 {
			t.Errorf("%d watches armed, want 2 (the fired one replaced once)", n)
		}
	})
}

// A TryClaim whose batch read the owner node with a watch (KazooRegistry's
// watchedOwner) needs no WatchOwner: the loop waits on the batch's watch,
// which the registry would otherwise arm with a second read of the node,
// and claims the moment it fires.
func TestWatchFromTheClaimAttemptIsUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := make(chan kazoo.Event, 1)
		held := &watchedOwner{err: claimedByOther("A"), watch: fired}
		reg := newScripted(t,
			tryClaim(nil, held),
			tryClaim(ourClaim(2), nil),
		)
		c := newClaimer(t, reg, testConfig())
		go func() {
			time.Sleep(50 * time.Millisecond) // before the first backoff tick (100ms)
			fired <- kazoo.Event{Type: kazoo.EventNodeDeleted}
		}()
		start := time.Now()
		pc, err := c.Claim(t.Context(), testTopic, testPartition)
		if err != nil || pc == nil {
			t.Fatalf("Claim: %v, %v", pc, err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("claimed after %v, want 50ms (when the batch's watch fired)", d)
		}
		if st := c.Stats(); st.WatchWakeups != 1 {
			t.Errorf("stats %+v, want 1 watch wake-up", st)
		}
	})
}
