package claim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// The previous owner A learns of the rebalance late, drains for the full
// ProcessingTimeout, commits and only then releases. Upstream's loop has
// given up by then and the partition stays unowned; ours is still trying
// and claims it the moment A's node is deleted (or, if the watch is missed,
// within one MaxInterval).
func TestOverlapRace(t *testing.T) {
	const (
		lag    = 1500 * time.Millisecond // A notices the rebalance after B starts claiming
		commit = 100 * time.Millisecond  // A's final commit
	)
	pt := testConfig().ProcessingTimeout
	releaseAt := lag + pt + commit // 11.6s after B starts

	t.Run("upstream gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSim(t)
			released := s.releaseAfter(releaseAt, s.mustClaim(t, "A"))
			start := time.Now()
			pc, err := upstreamClaim(s.as("B"), testTopic, testPartition, pt)
			if err == nil {
				t.Fatalf("upstream claimed %v; the scenario should defeat it", pc)
			}
			if !errors.Is(err, kazoo.ErrPartitionClaimedByOther) {
				t.Errorf("upstream err = %v, want ErrPartitionClaimedByOther", err)
			}
			gaveUp := time.Since(start)
			if err := <-released; err != nil {
				t.Fatalf("A's release: %v", err)
			}
			if gaveUp >= releaseAt {
				t.Errorf("upstream gave up at %v, after A released at %v", gaveUp, releaseAt)
			}
			if o := s.ownerNow(); o != "" {
				t.Errorf("owner = %q, want the partition unowned (the upstream failure)", o)
			}
			t.Logf("upstream: gave up at %v after %d attempts; A released at %v; partition left unowned",
				gaveUp, len(s.attempts["B"]), releaseAt)
		})
	})

	for _, missWatches := range []bool{false, true} {
		name := "ours claims on the watch"
		if missWatches {
			name = "ours claims on the backoff when the watch is missed"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSim(t)
				s.missWatches = missWatches
				released := s.releaseAfter(releaseAt, s.mustClaim(t, "A"))
				conf := testConfig()
				c := newClaimer(t, s.as("B"), conf)
				start := time.Now()
				pc, err := c.Claim(t.Context(), testTopic, testPartition)
				s.close()
				if err != nil {
					t.Fatalf("Claim: %v", err)
				}
				if err := <-released; err != nil {
					t.Fatalf("A's release: %v", err)
				}
				if pc.InstanceID != "B" || s.ownerNow() != "B" {
					t.Fatalf("claim %v, owner %q; want B", pc, s.ownerNow())
				}
				gap := s.claimedAt["B"].Sub(s.releasedAt)
				switch {
				case !missWatches && gap != 0:
					t.Errorf("claimed %v after A's release, want 0 (woken by the watch)", gap)
				case missWatches && (gap < 0 || gap > conf.MaxInterval):
					t.Errorf("claimed %v after A's release, want within MaxInterval %v", gap, conf.MaxInterval)
				}
				t.Logf("ours: claimed at %v, %v after A released; %d attempts; %+v",
					time.Since(start), gap, len(s.attempts["B"]), c.Stats())
			})
		})
	}
}

// The owner vanishes between our failed create and our look at its node:
// upstream's ClaimPartition returned "node does not exist" and its loop gave
// up, leaving the partition unowned. Ours treats it as "free now" and claims
// again at once, in every place the race can show.
func TestVanishedOwner(t *testing.T) {
	noNode := fmt.Errorf("get /consumers/g/owners/events/3: %w", kazoo.ErrNoNode)

	t.Run("upstream gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reg := newScripted(t, tryClaim(nil, noNode))
			if pc, err := upstreamClaim(reg, testTopic, testPartition, 10*time.Second); err == nil || !errors.Is(err, kazoo.ErrNoNode) {
				t.Fatalf("upstream = %v, %v; want it to give up with ErrNoNode", pc, err)
			}
		})
	})

	cases := []struct {
		name  string
		calls []call
	}{
		{"WatchOwner reports no owner", []call{
			tryClaim(nil, claimedByOther("A")),
			watchOwner("", nil, nil),
			tryClaim(ourClaim(2), nil),
		}},
		{"WatchOwner fails with NoNode", []call{
			tryClaim(nil, claimedByOther("A")),
			watchOwner("", nil, noNode),
			tryClaim(ourClaim(2), nil),
		}},
		{"TryClaim fails with NoNode", []call{
			tryClaim(nil, noNode),
			tryClaim(ourClaim(2), nil),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newClaimer(t, newScripted(t, tc.calls...), testConfig())
				start := time.Now()
				pc, err := c.Claim(t.Context(), testTopic, testPartition)
				if err != nil {
					t.Fatalf("Claim: %v", err)
				}
				if pc.Epoch != 2 {
					t.Errorf("claim %v, want epoch 2", pc)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("claimed after %v, want 0: a vanished owner means claim again at once", d)
				}
				st := c.Stats()
				if st.VanishedOwners != 1 || st.BackoffWakeups != 0 || st.Successes != 1 {
					t.Errorf("stats %+v, want 1 vanished owner, 0 backoff wake-ups, 1 success", st)
				}
			})
		})
	}
}

// The watch wakes the loop: the claim happens in the same instant as the
// deletion, between two backoff ticks, not at the next tick.
func TestWatchWakeup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSim(t)
		conf := testConfig()
		// Ticks (no jitter) at 0.1, 0.3, 0.7, 1.5, 2.5, 3.5s...; release at 3.05s.
		released := s.releaseAfter(3050*time.Millisecond, s.mustClaim(t, "A"))
		c := newClaimer(t, s.as("B"), conf)
		pc, err := c.Claim(t.Context(), testTopic, testPartition)
		s.close()
		if err != nil {
			t.Fatalf("Claim: %v", err)
		}
		if err := <-released; err != nil {
			t.Fatal(err)
		}
		if since := time.Since(s.releasedAt); since != 0 {
			t.Errorf("Claim returned %v after the deletion, want 0", since)
		}
		if pc.Epoch != 2 {
			t.Errorf("epoch %d, want 2", pc.Epoch)
		}
		st := c.Stats()
		if st.WatchWakeups != 1 || st.Attempts != 7 || st.BackoffWakeups != 5 {
			t.Errorf("stats %+v, want 1 watch wake-up, 7 attempts (0, .1, .3, .7, 1.5, 2.5, 3.05s), 5 backoff wake-ups", st)
		}
	})
}

// No watch ever fires: the backoff alone claims within MaxInterval of the
// owner leaving, with jitter on, wherever the release falls between ticks.
func TestMissedWatchFallback(t *testing.T) {
	for i := range 40 {
		releaseAt := 2*time.Second + time.Duration(i)*173*time.Millisecond
		t.Run(fmt.Sprint(releaseAt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSim(t)
				s.missWatches = true
				conf := testConfig()
				conf.Jitter = 0.5
				conf.Multiplier = 1.5
				released := s.releaseAfter(releaseAt, s.mustClaim(t, "A"))
				c := newClaimer(t, s.as("B"), conf)
				_, err := c.Claim(t.Context(), testTopic, testPartition)
				s.close()
				if err != nil {
					t.Fatalf("Claim: %v", err)
				}
				if err := <-released; err != nil {
					t.Fatal(err)
				}
				if gap := s.claimedAt["B"].Sub(s.releasedAt); gap < 0 || gap > conf.MaxInterval {
					t.Errorf("claimed %v after the owner left, want within MaxInterval %v", gap, conf.MaxInterval)
				}
				if st := c.Stats(); st.WatchWakeups != 0 || st.BackoffWakeups == 0 {
					t.Errorf("stats %+v, want only backoff wake-ups", st)
				}
				// Every wait between attempts is within MaxInterval.
				at := s.attempts["B"]
				for j := 1; j < len(at); j++ {
					if d := at[j].Sub(at[j-1]); d > conf.MaxInterval {
						t.Errorf("attempt %d came %v after the previous, want <= %v", j+1, d, conf.MaxInterval)
					}
				}
			})
		})
	}
}

// Cancelling ctx (the assignment changed) ends the wait at once with ctx's
// error; the bubble and goleak prove nothing is left running.
func TestCancelMidWait(t *testing.T) {
	t.Run("while waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSim(t)
			s.mustClaim(t, "A") // A never releases
			c := newClaimer(t, s.as("B"), testConfig())
			ctx, cancel := context.WithCancel(t.Context())
			const cancelAt = 3250 * time.Millisecond
			go func() { time.Sleep(cancelAt); cancel() }()
			start := time.Now()
			pc, err := c.Claim(ctx, testTopic, testPartition)
			s.close()
			if pc != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("Claim = %v, %v; want nil, context.Canceled", pc, err)
			}
			var ce *Error
			if errors.As(err, &ce) {
				t.Errorf("cancellation reported as a final failure: %v", err)
			}
			if d := time.Since(start); d != cancelAt {
				t.Errorf("returned at %v, want at the cancellation (%v)", d, cancelAt)
			}
			if st := c.Stats(); st.Failures != 0 || st.Successes != 0 {
				t.Errorf("stats %+v: a cancellation is neither", st)
			}
		})
	})
	t.Run("before the first attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newClaimer(t, newScripted(t), testConfig()) // no call expected
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, err := c.Claim(ctx, testTopic, testPartition); !errors.Is(err, context.Canceled) {
				t.Fatalf("Claim err = %v, want context.Canceled", err)
			}
			if _, err := c.Keep(ctx, testTopic, testPartition, func(*Error) { t.Error("callback called") }); !errors.Is(err, context.Canceled) {
				t.Fatalf("Keep err = %v, want context.Canceled", err)
			}
		})
	})
	t.Run("deadline during Keep's cool-down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSim(t)
			s.mustClaim(t, "A")
			conf := testConfig()
			c := newClaimer(t, s.as("B"), conf)
			budget := conf.ProcessingTimeout + conf.ExtraTime
			ctx, cancel := context.WithTimeout(t.Context(), budget+time.Second) // mid cool-down
			defer cancel()
			start := time.Now()
			failures := 0
			_, err := c.Keep(ctx, testTopic, testPartition, func(*Error) { failures++ })
			s.close()
			if !errors.Is(err, context.DeadlineExceeded) || failures != 1 {
				t.Fatalf("Keep = %v after %d failures; want DeadlineExceeded after 1", err, failures)
			}
			if d := time.Since(start); d != budget+time.Second {
				t.Errorf("returned at %v, want %v", d, budget+time.Second)
			}
		})
	})
}

// Permanent errors stop the loop at once: one attempt, no wait, a *Error
// that says so.
func TestPermanentErrors(t *testing.T) {
	znode := func(err error) error {
		return &kazoo.ZnodeError{Op: "create", Path: "/consumers/g/owners/events/3", Err: err}
	}
	custom := errors.New("operator says no")
	cases := []struct {
		name  string
		err   error
		watch bool // the error comes from WatchOwner, not TryClaim
		is    error
	}{
		{"NoAuth", znode(kazoo.ErrNoAuth), false, kazoo.ErrNoAuth},
		{"AuthFailed", znode(kazoo.ErrAuthFailed), false, kazoo.ErrAuthFailed},
		{"InvalidACL", znode(kazoo.ErrInvalidACL), false, kazoo.ErrInvalidACL},
		{"Permanent", Permanent(custom), false, custom},
		{"malformed", fmt.Errorf("owner: %w", kazoo.ErrMalformed), false, kazoo.ErrMalformed},
		{"closing", kazoo.ErrClosing, false, kazoo.ErrClosing},
		{"NoAuth from WatchOwner", znode(kazoo.ErrNoAuth), true, kazoo.ErrNoAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := []call{tryClaim(nil, tc.err)}
				if tc.watch {
					calls = []call{tryClaim(nil, claimedByOther("A")), watchOwner("", nil, tc.err)}
				}
				c := newClaimer(t, newScripted(t, calls...), testConfig())
				start := time.Now()
				_, err := c.Claim(t.Context(), testTopic, testPartition)
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want *Error", err)
				}
				if time.Since(start) != 0 || ce.Attempts != 1 || ce.Elapsed != 0 {
					t.Errorf("stopped after %v with %+v, want at once after 1 attempt", time.Since(start), ce)
				}
				if !errors.Is(err, tc.is) || !IsPermanent(err) || IsRetryable(err) {
					t.Errorf("err %v: Is(%v)=%v IsPermanent=%v IsRetryable=%v", err, tc.is, errors.Is(err, tc.is), IsPermanent(err), IsRetryable(err))
				}
				if st := c.Stats(); st.Failures != 1 || st.Attempts != 1 {
					t.Errorf("stats %+v", st)
				}
				// Keep does not retry a permanent error, and does not report it twice.
				c2 := newClaimer(t, newScripted(t, calls...), testConfig())
				if _, err := c2.Keep(t.Context(), testTopic, testPartition, func(e *Error) { t.Errorf("callback for permanent %v", e) }); !IsPermanent(err) {
					t.Errorf("Keep err = %v, want the permanent *Error", err)
				}
			})
		})
	}
}

// The budget runs out: a *Error with the right fields, after at least
// ProcessingTimeout+ExtraTime and ExtraAttempts attempts after
// ProcessingTimeout.
func TestFinalFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSim(t)
		s.mustClaim(t, "A") // A never releases
		conf := testConfig()
		c := newClaimer(t, s.as("B"), conf)
		start := time.Now()
		_, err := c.Claim(t.Context(), testTopic, testPartition)
		s.close()
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want *Error", err)
		}
		budget := conf.ProcessingTimeout + conf.ExtraTime
		attempts := s.attempts["B"]
		if ce.Topic != testTopic || ce.Partition != testPartition || ce.Attempts != len(attempts) || ce.Elapsed != budget {
			t.Errorf("Error %+v, want %s/%d, %d attempts, elapsed %v", ce, testTopic, testPartition, len(attempts), budget)
		}
		if !errors.Is(err, kazoo.ErrPartitionClaimedByOther) || !IsRetryable(err) || IsPermanent(err) {
			t.Errorf("err %v: want retryable, wrapping ErrPartitionClaimedByOther", err)
		}
		if last := attempts[len(attempts)-1].Sub(start); last != budget {
			t.Errorf("last attempt at %v, want exactly at the deadline %v", last, budget)
		}
		after := 0
		for _, a := range attempts {
			if a.Sub(start) >= conf.ProcessingTimeout {
				after++
			}
		}
		if after < conf.ExtraAttempts {
			t.Errorf("%d attempts after ProcessingTimeout, want >= %d", after, conf.ExtraAttempts)
		}
		st := c.Stats()
		if st.Failures != 1 || st.Attempts != uint64(len(attempts)) || st.Successes != 0 {
			t.Errorf("stats %+v", st)
		}
		t.Logf("%v", err)
	})
}

// stallRegistry stalls every TryClaim (a hung connection) and then fails
// with a retryable error; any other call fails the test.
type stallRegistry struct {
	t      testing.TB
	stall  time.Duration
	starts []time.Time
}

func (r *stallRegistry) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	r.starts = append(r.starts, time.Now())
	time.Sleep(r.stall)
	return nil, fmt.Errorf("create: %w", kazoo.ErrConnectionClosed)
}

func (r *stallRegistry) WatchOwner(context.Context, string, int32) (string, <-chan kazoo.Event, error) {
	r.t.Error("unexpected WatchOwner")
	return "", nil, errUnexpected
}

func (r *stallRegistry) Release(context.Context, *kazoo.PartitionClaim) error {
	r.t.Error("unexpected Release")
	return errUnexpected
}

// Stalled calls may eat the whole budget; ExtraAttempts still guarantees
// that many attempts after ProcessingTimeout.
func TestExtraAttemptsAfterStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := testConfig()
		conf.ExtraAttempts = 4
		r := &stallRegistry{t: t, stall: 7 * time.Second}
		c := newClaimer(t, r, conf)
		start := time.Now()
		_, err := c.Claim(t.Context(), testTopic, testPartition)
		if !errors.Is(err, kazoo.ErrConnectionClosed) || !IsRetryable(err) {
			t.Fatalf("err = %v, want a retryable *Error wrapping ErrConnectionClosed", err)
		}
		after := 0
		for _, s := range r.starts {
			if s.Sub(start) >= conf.ProcessingTimeout {
				after++
			}
		}
		if after != conf.ExtraAttempts {
			t.Errorf("%d attempts after ProcessingTimeout, want %d", after, conf.ExtraAttempts)
		}
	})
}

// Keep: each final failure is reported through a callback that never blocks
// Keep (NotifyChan drops when nobody reads), then Keep waits RetryCooldown
// and claims again, until the partition is free.
func TestKeep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSim(t)
		conf := testConfig()
		budget := conf.ProcessingTimeout + conf.ExtraTime // 12s
		// Claim #1 fails at 12s, #2 runs 17s..29s and fails, #3 starts at 34s.
		released := s.releaseAfter(30*time.Second, s.mustClaim(t, "A"))
		c := newClaimer(t, s.as("B"), conf)

		errs := make(chan error, 1) // room for one; nobody reads it
		var dropped []*Error
		notify := NotifyChan(errs, func(e *Error) { dropped = append(dropped, e) })
		var reported []time.Duration
		start := time.Now()
		onFailure := func(e *Error) {
			reported = append(reported, time.Since(start))
			notify(e)
		}
		pc, err := c.Keep(t.Context(), testTopic, testPartition, onFailure)
		s.close()
		if err != nil {
			t.Fatalf("Keep: %v", err)
		}
		if err := <-released; err != nil {
			t.Fatal(err)
		}
		if pc.InstanceID != "B" || s.ownerNow() != "B" {
			t.Fatalf("claim %v owner %q, want B", pc, s.ownerNow())
		}
		cool := conf.RetryCooldown
		wantReported := []time.Duration{budget, budget + cool + budget}
		if fmt.Sprint(reported) != fmt.Sprint(wantReported) {
			t.Errorf("failures reported at %v, want %v", reported, wantReported)
		}
		if d := time.Since(start); d != 2*(budget+cool) {
			t.Errorf("claimed at %v, want %v (after the second cool-down)", d, 2*(budget+cool))
		}
		// The retry after each failure comes exactly one cool-down later.
		for _, r := range reported {
			found := false
			for _, a := range s.attempts["B"] {
				found = found || a.Sub(start) == r+cool
			}
			if !found {
				t.Errorf("no attempt %v after the failure at %v", cool, r)
			}
		}
		if len(errs) != 1 || len(dropped) != 1 {
			t.Errorf("%d delivered, %d dropped; want 1 and 1 (the channel holds one)", len(errs), len(dropped))
		}
		var first *Error
		if e := <-errs; !errors.As(e, &first) || first.Partition != testPartition || first.Elapsed != budget {
			t.Errorf("delivered %v", e)
		}
		if st := c.Stats(); st.Failures != 2 || st.Successes != 1 {
			t.Errorf("stats %+v, want 2 failures and 1 success", st)
		}
	})
}

// A registry whose owner flaps (always "taken", and always "gone" when
// looked at) or whose watch channel is always ready cannot make the loop
// spin: it falls back to the timer after a few immediate attempts.
func TestNoHotLoop(t *testing.T) {
	closed := make(chan kazoo.Event)
	close(closed)
	cases := map[string]func() (string, <-chan kazoo.Event){
		"owner always vanished": func() (string, <-chan kazoo.Event) { return "", nil },
		"watch always ready":    func() (string, <-chan kazoo.Event) { return "A", closed },
	}
	for name, watch := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conf := testConfig()
				r := &flapRegistry{t: t, watch: watch}
				c := newClaimer(t, r, conf)
				_, err := c.Claim(t.Context(), testTopic, testPartition)
				if !errors.Is(err, kazoo.ErrPartitionClaimedByOther) {
					t.Fatalf("err = %v", err)
				}
				st := c.Stats()
				// At most maxImmediate+1 attempts per backoff wake-up.
				if limit := (st.BackoffWakeups + 1) * (maxImmediate + 1); st.Attempts > limit {
					t.Errorf("%d attempts for %d backoff wake-ups, want <= %d", st.Attempts, st.BackoffWakeups, limit)
				}
				if st.BackoffWakeups < 10 {
					t.Errorf("%d backoff wake-ups, want the loop to keep waiting on the timer", st.BackoffWakeups)
				}
			})
		})
	}
}

type flapRegistry struct {
	t     testing.TB
	watch func() (string, <-chan kazoo.Event)
}

func (r *flapRegistry) TryClaim(context.Context, string, int32) (*kazoo.PartitionClaim, error) {
	return nil, claimedByOther("A")
}

func (r *flapRegistry) WatchOwner(context.Context, string, int32) (string, <-chan kazoo.Event, error) {
	o, ch := r.watch()
	return o, ch, nil
}

func (r *flapRegistry) Release(context.Context, *kazoo.PartitionClaim) error {
	r.t.Error("unexpected Release")
	return errUnexpected
}

// A transient error from TryClaim or WatchOwner is retried on the backoff;
// a watch that reports EventNotWatching (connection lost) also wakes the
// loop; a watch fired by a new owner leads to a fresh watch.
func TestTransientErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every wait draws the next backoff interval (.1, .2, .4, .8, 1, 1s),
		// whether the timer or the watch ends it.
		notWatching := make(chan kazoo.Event, 1)
		notWatching <- kazoo.Event{Type: kazoo.EventNotWatching, Err: kazoo.ErrConnectionClosed}
		close(notWatching)
		ownerChanged := make(chan kazoo.Event, 1)
		ownerChanged <- kazoo.Event{Type: kazoo.EventNodeDeleted}
		never := make(chan kazoo.Event)
		reg := newScripted(t,
			tryClaim(nil, fmt.Errorf("create: %w", kazoo.ErrConnectionClosed)), // t=0, wait 100ms
			tryClaim(nil, claimedByOther("A")),                                 // t=.1
			watchOwner("", nil, kazoo.ErrSessionMoved),                         // wait 200ms
			tryClaim(nil, claimedByOther("A")),                                 // t=.3
			watchOwner("A", notWatching, nil),                                  // fires at once (.4 drawn)
			tryClaim(nil, claimedByOther("C")),                                 // t=.3
			watchOwner("C", ownerChanged, nil),                                 // fires at once (.8 drawn)
			tryClaim(nil, claimedByOther("D")),                                 // t=.3
			watchOwner("D", never, nil),                                        // wait 1s
			tryClaim(nil, claimedByOther("D")),                                 // t=1.3, watch still armed: no WatchOwner
			tryClaim(ourClaim(9), nil),                                         // t=2.3
		)
		c := newClaimer(t, reg, testConfig())
		start := time.Now()
		pc, err := c.Claim(t.Context(), testTopic, testPartition)
		if err != nil || pc.Epoch != 9 {
			t.Fatalf("Claim = %v, %v", pc, err)
		}
		if d := time.Since(start); d != 2300*time.Millisecond {
			t.Errorf("claimed at %v, want 2.3s", d)
		}
		if st := c.Stats(); st.WatchWakeups != 2 || st.BackoffWakeups != 4 || st.Attempts != 7 {
			t.Errorf("stats %+v, want 2 watch and 4 backoff wake-ups, 7 attempts", st)
		}
	})
}

// A Registry that returns neither a claim nor an error is a bug, reported
// as a permanent failure rather than a nil claim.
func TestNilClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClaimer(t, newScripted(t, tryClaim(nil, nil)), testConfig())
		if _, err := c.Claim(t.Context(), testTopic, testPartition); !IsPermanent(err) {
			t.Fatalf("err = %v, want permanent", err)
		}
	})
}
