package worker

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// retryBackOff is the waits of the worker's retry loops: from
// Claim.InitialInterval, doubling up to limit, without jitter, never
// giving up by itself (the loop's context or its own test ends it).
func (w *Worker) retryBackOff(limit time.Duration) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(w.cfg.InitialInterval),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(limit),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
	)
}

// untilClosed returns a context cancelled once closed is closed (never,
// for a nil channel), for backoff.WithContext. Call cancel when done.
func untilClosed(closed <-chan struct{}) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		select {
		case <-closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
