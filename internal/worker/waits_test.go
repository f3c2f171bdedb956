package worker

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
)

// Close keeps its bound while a call to Kafka that takes no context hangs
// (sarama asking for an offset): the call is abandoned when Close begins.
func TestUntilClosingAbandonsAtClose(t *testing.T) {
	stopping := make(chan struct{})
	release := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		_, err := offsets.UntilClosing(stopping, func() (int, error) { <-release; return 7, nil })
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("returned %v before the call ended or Close began", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(stopping)
	select {
	case err := <-res:
		if !errors.Is(err, offsets.ErrGroupClosing) {
			t.Fatalf("err = %v, want offsets.ErrGroupClosing", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting for the call after Close began")
	}
	close(release) // the abandoned call ends in its goroutine

	// A call that ends first returns its result, whatever Close does later.
	v, err := offsets.UntilClosing(make(chan struct{}), func() (int, error) { return 3, nil })
	if v != 3 || err != nil {
		t.Errorf("untilClosing = %d, %v; want 3, nil", v, err)
	}
}
