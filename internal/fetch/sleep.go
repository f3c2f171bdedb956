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
