package claim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/kazoo"
)

// A claim stopped after an attempt whose reply was lost says so: the owner
// node may exist under our session, and only the caller can clean it up.
// A stop after definite answers (owned by another) does not.
func TestStoppedClaimReportsDoubt(t *testing.T) {
	lost := fmt.Errorf("claim: %w", zk.ErrConnectionClosed)
	other := fmt.Errorf("claim: %w", kazoo.ErrPartitionClaimedByOther)
	contended := fmt.Errorf("claim: %w after 3 attempts", kazoo.ErrClaimContended)
	cases := []struct {
		name     string
		calls    []call
		cancelAt time.Duration // the first backoff wait is 100ms, the second 200ms
		doubt    bool
	}{
		{"reply lost, then stopped in the backoff", []call{tryClaim(nil, lost)}, 50 * time.Millisecond, true},
		{"owned by another, then stopped", []call{tryClaim(nil, other), watchOwner("A", nil, nil)}, 50 * time.Millisecond, false},
		{"reply lost, then a definite answer", []call{tryClaim(nil, lost), tryClaim(nil, other), watchOwner("A", nil, nil)}, 150 * time.Millisecond, false},
		{"a definite answer, then a reply lost", []call{tryClaim(nil, other), watchOwner("A", nil, nil), tryClaim(nil, lost)}, 150 * time.Millisecond, true},
		// kazoo answers ErrClaimContended also with our node in place (the
		// epoch kept moving under its bump): no proof the node is gone.
		{"reply lost, then contended", []call{tryClaim(nil, lost), tryClaim(nil, contended)}, 150 * time.Millisecond, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newClaimer(t, newScripted(t, tc.calls...), testConfig())
				ctx, cancel := context.WithCancel(t.Context())
				go func() { time.Sleep(tc.cancelAt); cancel() }()
				_, err := c.Keep(ctx, testTopic, testPartition, nil)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Keep err = %v, want context.Canceled", err)
				}
				if got := errors.Is(err, ErrStoppedInDoubt); got != tc.doubt {
					t.Errorf("Keep err = %v: in doubt %v, want %v", err, got, tc.doubt)
				}
				if IsRetryable(err) {
					t.Errorf("a stop is retryable: %v", err)
				}
			})
		})
	}
}
