package claim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A call that ignores ctx (a ZooKeeper request held while the server is
// unreachable) no longer holds up its caller: untilDone returns ctx's error
// at the deadline, and the call's goroutine ends when the call does.
func TestUntilDone(t *testing.T) {
	t.Run("ctx ends the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			unblock := make(chan struct{})
			ended := make(chan struct{})
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			start := time.Now()
			err := untilDone(ctx, func() error {
				defer close(ended)
				<-unblock // ignores ctx
				return errors.New("too late")
			})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("untilDone = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d != time.Second {
				t.Errorf("returned after %v, want at the deadline (1s)", d)
			}
			close(unblock) // the connection returns
			<-ended
		})
	})
	t.Run("the call's result", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			want := errors.New("release failed")
			if err := untilDone(t.Context(), func() error { return want }); err != want {
				t.Errorf("untilDone = %v, want %v", err, want)
			}
		})
	})
}
