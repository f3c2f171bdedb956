package consumergroup

import (
	"errors"
	"testing"
	"time"
)

// Close keeps its bound while a call to Kafka that takes no context hangs
// (sarama opening a partition consumer, asking for an offset): the call is
// abandoned when Close begins, and what it returns later is discarded.
func TestUntilClosingAbandonsAtClose(t *testing.T) {
	stopper := make(chan struct{})
	release := make(chan struct{})
	discarded := make(chan int, 1)
	res := make(chan error, 1)
	go func() {
		_, err := untilClosing(stopper, func() (int, error) { <-release; return 7, nil }, func(v int) { discarded <- v })
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("returned %v before the call ended or Close began", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(stopper)
	select {
	case err := <-res:
		if !errors.Is(err, errGroupClosing) {
			t.Fatalf("err = %v, want errGroupClosing", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting for the call after Close began")
	}
	close(release)
	select {
	case v := <-discarded:
		if v != 7 {
			t.Errorf("discarded %d, want the call's 7", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned call's result was never discarded")
	}

	// A call that ends first returns its result, whatever Close does later.
	v, err := untilClosing(make(chan struct{}), func() (int, error) { return 3, nil }, nil)
	if v != 3 || err != nil {
		t.Errorf("untilClosing = %d, %v; want 3, nil", v, err)
	}
}
