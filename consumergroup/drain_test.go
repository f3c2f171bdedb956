package consumergroup

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// TestDrainEndsWhenMarkingCannotSucceed: a partition that moves away waits
// up to ProcessingTimeout for what it delivered to be marked, but not once
// no mark could lead to a commit any more: the claim lost, the worker
// abandoned (session expired), or an offset conflict (a seek). Each case
// must end the drain at once, without a commit.
func TestDrainEndsWhenMarkingCannotSucceed(t *testing.T) {
	cases := []struct {
		name    string
		event   func(o *ownedOffsets, w *partitionWorker)
		wantErr error // nil: no error
	}{
		{"claim lost", func(o *ownedOffsets, w *partitionWorker) { o.lost.Store(true); w.lost() }, kazoo.ErrClaimLost},
		{"abandoned", func(_ *ownedOffsets, w *partitionWorker) { w.stop(true) }, nil},
		{"conflict", func(o *ownedOffsets, w *partitionWorker) { o.seeking.Store(true); w.seek(3) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				om := &zookeeperOffsetManager{
					cg:    &ConsumerGroup{log: slog.New(slog.DiscardHandler)},
					parts: make(map[topicPartition]*ownedOffsets),
				}
				w := newBareWorker()
				tp := topicPartition{"t", 0}
				o := om.adopt(tp, &kazoo.PartitionClaim{Topic: "t", Partition: 0, InstanceID: "i"}, 0, -1, w)
				o.offer(0)
				o.delivered(0) // delivered, never marked

				const timeout = time.Minute
				start := time.Now()
				done := make(chan error, 1)
				go func() { done <- om.finalize(o, timeout) }()
				time.Sleep(time.Second)
				c.event(o, w)
				err := <-done
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("drain took %v after the event, want it to end at once", took)
				}
				if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("finalize = %v, want %v", err, c.wantErr)
				}
				if len(om.parts) != 0 {
					t.Error("the partition is still tracked")
				}
				w.cancel()
			})
		})
	}
}

// A drain with nothing to interrupt it still waits for its marks.
func TestDrainWaitsForMarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		om := &zookeeperOffsetManager{
			cg:    &ConsumerGroup{log: slog.New(slog.DiscardHandler)},
			parts: make(map[topicPartition]*ownedOffsets),
		}
		w := newBareWorker()
		defer w.cancel()
		o := om.adopt(topicPartition{"t", 0}, nil, 0, -1, w)
		o.offer(0)
		o.delivered(0)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- om.finalize(o, time.Minute) }()
		time.Sleep(10 * time.Second)
		select {
		case err := <-done:
			t.Fatalf("drain ended before the mark or the timeout: %v", err)
		default:
		}
		if !o.mark(nil, 0) {
			t.Fatal("mark refused")
		}
		// The final commit has no group to write to here and fails; only
		// the drain's end matters.
		<-done
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("drain ended %v after it began, want exactly at the mark (10s)", took)
		}
	})
}

// newBareWorker is a worker with its channels and nothing running, for
// tests of the offset manager's side of the lifecycle.
func newBareWorker() *partitionWorker {
	ctx, cancel := context.WithCancel(context.Background())
	return &partitionWorker{
		ctx: ctx, cancel: cancel,
		seekC:    make(chan int64, 1),
		lostC:    make(chan struct{}),
		abandonC: make(chan struct{}),
		done:     make(chan struct{}),
	}
}
