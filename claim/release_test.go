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

func TestRelease(t *testing.T) {
	connLost := fmt.Errorf("multi: %w", kazoo.ErrConnectionClosed)
	notClaimed := fmt.Errorf("delete: %w", kazoo.ErrPartitionNotClaimed)
	lost := fmt.Errorf("check epoch: %w", kazoo.ErrClaimLost)
	cases := []struct {
		name    string
		calls   []call
		wantErr error         // nil: success
		after   time.Duration // fake time Release takes
	}{
		{"ok", []call{release(nil)}, nil, 0},
		{"claim lost passes through", []call{release(lost)}, kazoo.ErrClaimLost, 0},
		{"not claimed on the first attempt passes through", []call{release(notClaimed)}, kazoo.ErrPartitionNotClaimed, 0},
		{"transient error is retried", []call{release(connLost), release(nil)}, nil, 100 * time.Millisecond},
		{"gone on a retry means an earlier attempt released", []call{release(connLost), release(notClaimed)}, nil, 100 * time.Millisecond},
		{"claim lost on a retry passes through", []call{release(connLost), release(lost)}, kazoo.ErrClaimLost, 100 * time.Millisecond},
		{"permanent error stops", []call{release(kazoo.ErrNoAuth)}, kazoo.ErrNoAuth, 0},
		{"bounded by ReleaseTimeout", []call{
			// 0, .1, .3, .7, 1.5, 2.5s; the next wait ends at the 3s bound.
			release(connLost), release(connLost), release(connLost),
			release(connLost), release(connLost), release(connLost),
		}, kazoo.ErrConnectionClosed, 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newClaimer(t, newScripted(t, tc.calls...), testConfig())
				start := time.Now()
				err := c.Release(t.Context(), ourClaim(4))
				if d := time.Since(start); d != tc.after {
					t.Errorf("Release took %v, want %v", d, tc.after)
				}
				if tc.wantErr == nil {
					if err != nil {
						t.Fatalf("Release: %v", err)
					}
					if st := c.Stats(); st.Releases != 1 || st.ReleaseFailures != 0 {
						t.Errorf("stats %+v", st)
					}
					return
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Release = %v, want errors.Is %v", err, tc.wantErr)
				}
				if st := c.Stats(); st.Releases != 0 || st.ReleaseFailures != 1 {
					t.Errorf("stats %+v", st)
				}
			})
		})
	}
}

// A caller whose ctx is already cancelled (the partition was revoked) still
// releases: the registry sees a live context with the caller's values and
// the ReleaseTimeout deadline.
func TestReleaseAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		conf := testConfig()
		check := func(ctx context.Context, pc *kazoo.PartitionClaim) {
			if ctx.Err() != nil {
				t.Errorf("Release got a done context: %v", ctx.Err())
			}
			if ctx.Value(key{}) != "v" {
				t.Error("Release lost the caller's context values")
			}
			if dl, ok := ctx.Deadline(); !ok || dl.Sub(time.Now()) != conf.ReleaseTimeout {
				t.Errorf("Release deadline %v (%v), want now+%v", dl, ok, conf.ReleaseTimeout)
			}
			if pc.Epoch != 4 {
				t.Errorf("released %v, want epoch 4", pc)
			}
		}
		c := newClaimer(t, newScripted(t, call{method: "Release", check: check}), conf)
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "v"))
		cancel()
		if err := c.Release(ctx, ourClaim(4)); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := c.Release(ctx, nil); err == nil {
			t.Error("Release(nil) succeeded")
		}
	})
}

// A late release by the old owner cannot delete the new owner's claim: the
// fenced primitive says ErrClaimLost and the owner stays.
func TestReleaseFencedAgainstNewOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSim(t)
		old := s.mustClaim(t, "B")
		if err := s.as("B").Release(t.Context(), old); err != nil {
			t.Fatal(err)
		}
		s.mustClaim(t, "C")
		c := newClaimer(t, s.as("B"), testConfig())
		err := c.Release(t.Context(), old)
		if !errors.Is(err, kazoo.ErrClaimLost) {
			t.Fatalf("late Release = %v, want ErrClaimLost", err)
		}
		if o := s.ownerNow(); o != "C" {
			t.Errorf("owner %q after a late release, want C", o)
		}
	})
}
