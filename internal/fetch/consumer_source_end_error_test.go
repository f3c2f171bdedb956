package fetch

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
)

// sarama's partition consumer that gives up on its partition (an offset
// out of range mid-stream, ErrConsumerRetriesExhausted with
// Consumer.Retry.Max) queues the error on Errors() before it closes
// Messages(). The Source ends then; the error must still reach the
// group's Errors(), and not be dropped by the drain of Close.
func TestEndedConsumerReportsItsLastError(t *testing.T) {
	pc := newFakePartitionConsumer(5)
	var reported []error
	src := openedSource(pc, nil, func(err error) { reported = append(reported, err) }, func(err error) error { return err })
	next(t, src, 5)
	// As sarama does: the error first, then the channels close.
	pc.errs <- &sarama.ConsumerError{Topic: "t", Partition: 0, Err: sarama.ErrOffsetOutOfRange}
	pc.AsyncClose()
	if m, err := src.Next(nil); !errors.Is(err, ErrSourceEnded) {
		t.Fatalf("Next = %v, %v after the partition consumer closed, want ErrSourceEnded", m, err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if len(reported) != 1 || !errors.Is(reported[0], sarama.ErrOffsetOutOfRange) {
		t.Fatalf("reported %v; want the error sarama gave up with (ErrOffsetOutOfRange)", reported)
	}
}
