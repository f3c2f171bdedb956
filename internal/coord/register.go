package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

// Bounds of the waits between registration attempts: registerBackoff
// after the first failure, doubling up to registerMaxBackoff, without
// jitter.
const (
	registerBackoff    = 100 * time.Millisecond
	registerMaxBackoff = time.Second
)

// Register registers the instance through register, and again while the
// outcome is in doubt.
//
// A registration whose reply was lost (the connection dropped, a leader
// election) is in doubt: it is tried again, a few times within timeout,
// and finding the node then (kazoo.ErrInstanceAlreadyRegistered) means the
// first attempt was applied. A closed stop ends the retries. The error is
// the last attempt's.
func Register(register func() error, timeout time.Duration, stop <-chan struct{}, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()

	deadline := time.Now().Add(timeout)
	attempts := 0
	var last error
	err := backoff.RetryNotify(func() error {
		attempts++
		last = register()
		switch {
		case errors.Is(last, kazoo.ErrInstanceAlreadyRegistered):
			// Held by this session already (maybe an earlier attempt whose
			// reply was lost), or by an older session of ours about to
			// expire: its deletion wakes the loop, which registers again.
			return nil
		case last != nil && (!kazoo.IsRetryable(last) || time.Now().After(deadline)):
			return backoff.Permanent(last)
		}
		return last
	}, backoff.WithContext(newRegisterBackOff(), ctx), func(err error, wait time.Duration) {
		log.Warn("registering failed; trying again", "attempt", attempts, "err", err, "in", wait)
	})
	if err != nil {
		return last // not the context's error when stop ended the waits
	}
	return nil
}

func newRegisterBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(registerBackoff),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(registerMaxBackoff),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // the deadline bounds it, checked after each attempt
	)
}

// registerAgain registers the instance again (after an expiry, or a
// deleted registration), reporting a failure as what. It reports whether
// the instance is fenced: its static id is registered by another session
// (kazoo.ErrFencedInstanceID), which took our place while we were away.
// A fenced instance stops every partition (committing and releasing what
// its session still holds) and claims nothing again: two instances must
// not consume under one id. docs/static-members.md.
func (l *Loop) registerAgain(ps *partitions, what string) (fenced bool) {
	err := Register(l.d.ZooKeeper.Register, l.cfg.RegisterTimeout, l.d.Stop, l.d.Log)
	if err == nil {
		return false
	}
	l.d.Report("", -1, fmt.Errorf("%s: %w", what, err))
	if !errors.Is(err, kazoo.ErrFencedInstanceID) {
		return false
	}
	l.d.Log.Error("fenced: another instance registered our static id; consuming nothing until Close", "err", err)
	ps.stopAll(false)
	l.d.Metrics.Owned(0)
	if l.d.Fenced != nil {
		l.d.Fenced(err)
	}
	return true
}

// sweepWhileFenced is a fenced instance's loop until Stop: it consumes
// nothing, but deletes the owner nodes its stopped workers may have left
// (a release that failed for good), again every RetryCooldown until none
// is left. The instance that holds our id now never takes an owner node
// of that id under another session: it waits for these, which would
// otherwise stay until Close ends our session.
func (l *Loop) sweepWhileFenced(ps *partitions) {
	for {
		l.sweepLeftovers(ps)
		ps.stopAll(false) // waits for the sweeps; a failed one leaves its partition leftover again
		if len(ps.leftover) == 0 {
			break
		}
		l.d.Log.Warn("fenced: owner nodes of ours are left; deleting them again", "partitions", len(ps.leftover),
			"in", l.cfg.RetryCooldown)
		select {
		case <-l.d.Stop:
			return
		case <-time.After(l.cfg.RetryCooldown):
		}
	}
	<-l.d.Stop
}
