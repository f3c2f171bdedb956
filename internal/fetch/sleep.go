package fetch

import (
	"context"
	"time"
)

// sleepCtx waits d, or less when ctx ends first; it reports whether ctx is
// still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sleepOrWake is sleepCtx that also ends when wake (nil: never) is closed;
// woken reports that it did.
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) (woken, live bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false, true
	case <-wake:
		return true, ctx.Err() == nil
	case <-ctx.Done():
		return false, false
	}
}
