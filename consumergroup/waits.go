package consumergroup

import "github.com/zkgroup/kafka/internal/offsets"

// errGroupClosing ends a call to Kafka that Close stopped waiting for; the
// offset stores end theirs with the same error.
var errGroupClosing = offsets.ErrGroupClosing

// untilClosing runs call, which takes no context (sarama opens a partition
// consumer and asks for an offset without one, up to Net timeouts times
// Metadata retries), and returns its result, or errGroupClosing as soon
// as Close begins. An abandoned call goes on in its goroutine; discard, if
// not nil, gets its result, so a partition consumer it opened is closed.
// Close must keep its bound; a rebalance still waits for the call, since a
// partition consumer still opening would refuse the successor's open.
func untilClosing[T any](stopper <-chan struct{}, call func() (T, error), discard func(T)) (T, error) {
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
	case <-stopper:
		go func() {
			if r := <-done; r.err == nil && discard != nil {
				discard(r.v)
			}
		}()
		var zero T
		return zero, errGroupClosing
	}
}
