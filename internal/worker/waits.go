package worker

import "github.com/zkgroup/kafka/internal/offsets"

// untilClosing runs call, which takes no context (sarama asks a leader
// for an offset without one, up to Net timeouts times Metadata retries),
// and returns its result, or offsets.ErrGroupClosing as soon as stopping
// is closed (Close began): Close must keep its bound. An abandoned call
// goes on in its goroutine, its result dropped.
func untilClosing[T any](stopping <-chan struct{}, call func() (T, error)) (T, error) {
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
	case <-stopping:
		var zero T
		return zero, offsets.ErrGroupClosing
	}
}
