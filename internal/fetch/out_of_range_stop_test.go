package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// stuckRangeClient never answers a log range lookup until released.
type stuckRangeClient struct{ release chan struct{} }

func (stuckRangeClient) Leader(string, int32) (*sarama.Broker, error) { return nil, errors.New("none") }
func (stuckRangeClient) RefreshMetadata(...string) error              { return nil }
func (c stuckRangeClient) GetOffset(string, int32, int64) (int64, error) {
	<-c.release
	return 0, errors.New("released")
}

// A stop must not wait for a broker that does not answer the lookup of the
// log's range after an offset out of range mid-stream.
func TestExplainReturnsWhenStopped(t *testing.T) {
	client := stuckRangeClient{release: make(chan struct{})}
	defer close(client.release) // the lookup ends with the test: no goroutine left
	r := newReadPositions(client, "t", 0)
	r.reach(10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.explain(ctx, 5, sarama.ErrOffsetOutOfRange) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("explain = %v, want the stop's context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("explain still waits for the lookup 5 s after the stop")
	}
}
