package offsets

import "time"

// UntilClosing runs call, which takes no context (sarama asks for
// offsets without one), and returns its result, or ErrGroupClosing as
// soon as closing is closed (nil: never), so Close keeps its bound; an
// abandoned call goes on in its goroutine, its result dropped.
func UntilClosing[T any](closing <-chan struct{}, call func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-closing:
		var zero T
		return zero, ErrGroupClosing
	}
}

// deadlineTimer returns a channel that fires at deadline (never for a zero
// deadline) and the function that stops its timer.
func deadlineTimer(deadline time.Time) (<-chan time.Time, func()) {
	if deadline.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(deadline))
	return t.C, func() { t.Stop() }
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
