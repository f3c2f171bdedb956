package parallel

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// outcome is how a message's processing ended.
type outcome int

const (
	succeeded outcome = iota // fn returned nil
	exhausted                // fn failed and its retries are exhausted
	abandoned                // the claim stopped before it succeeded or was exhausted
)

// result is a message's processing, sent back to the claim's goroutine.
type result struct {
	entry    *entry
	outcome  outcome
	attempts int
	err      error // fn's last error
}

// process runs fn on e's message until it succeeds, its retries are
// exhausted, or the claim stops: once stopping is closed no further
// attempt starts, and once ctx is done a failure counts as abandoned, not
// exhausted, so a message the drain cut short is never skipped.
func (h *handler) process(ctx context.Context, stopping <-chan struct{}, e *entry) result {
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(h.cfg.Retry.InitialInterval),
		backoff.WithMaxInterval(h.cfg.Retry.MaxInterval),
		backoff.WithMaxElapsedTime(h.cfg.Retry.MaxElapsedTime),
	)
	for attempts := 1; ; attempts++ {
		err := h.fn(ctx, e.msg)
		if err == nil {
			return result{entry: e, outcome: succeeded, attempts: attempts}
		}
		if ctx.Err() != nil {
			return result{entry: e, outcome: abandoned, attempts: attempts, err: err}
		}
		var permanent *backoff.PermanentError
		wait := b.NextBackOff()
		if errors.As(err, &permanent) || attempts >= h.cfg.Retry.MaxAttempts || wait == backoff.Stop {
			return result{entry: e, outcome: exhausted, attempts: attempts, err: err}
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-stopping:
			timer.Stop()
			return result{entry: e, outcome: abandoned, attempts: attempts, err: err}
		}
	}
}
