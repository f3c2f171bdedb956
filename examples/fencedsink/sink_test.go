package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/IBM/sarama"
)

func msgs(partition int32, offsets ...int64) []*sarama.ConsumerMessage {
	var out []*sarama.ConsumerMessage
	for _, o := range offsets {
		out = append(out, &sarama.ConsumerMessage{Topic: "t", Partition: partition, Offset: o, Value: []byte("v")})
	}
	return out
}

// count returns the result of a COUNT(*) query.
func (s *Sink) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A checked sink takes writes at the stored epoch or above and refuses
// lower ones, per partition, recording the refusal; an unchecked one
// takes everything.
func TestSinkFencesByEpoch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sink.db")
	s, err := OpenSink(path, "a", true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	for _, w := range []struct {
		name      string
		epoch     int64
		msgs      []*sarama.ConsumerMessage
		wantFence bool
	}{
		{"first write", 3, msgs(0, 0, 1), false},
		{"same epoch", 3, msgs(0, 2), false},
		{"a new owner", 5, msgs(0, 2, 3), false},
		{"the old owner after it", 3, msgs(0, 3, 4), true},
		{"another partition, lower epoch", 1, msgs(1, 0), false},
	} {
		err := s.Write(ctx, w.epoch, w.msgs...)
		if got := errors.Is(err, ErrFenced); got != w.wantFence || (err != nil && !got) {
			t.Errorf("%s: Write(epoch %d) = %v, fenced %v wanted", w.name, w.epoch, err, w.wantFence)
		}
	}
	if row, ok, err := s.Partition(ctx, "t", 0); err != nil || !ok || row != (PartitionRow{Epoch: 5, NextOffset: 4}) {
		t.Errorf("partition 0: %+v, %v, %v; want epoch 5, next offset 4", row, ok, err)
	}
	if n := s.count(t, `SELECT COUNT(*) FROM processed WHERE partition = 0`); n != 5 {
		t.Errorf("processed rows of partition 0: %d, want 5 (0, 1, 2 under 3; 2, 3 under 5)", n)
	}
	if n := s.count(t, `SELECT COUNT(*) FROM rejected WHERE epoch = 3 AND stored_epoch = 5 AND messages = 2`); n != 1 {
		t.Errorf("rejected rows: %d, want the one write under 3", n)
	}

	u, err := OpenSink(path, "b", false)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := u.Write(ctx, 1, msgs(0, 9)...); err != nil {
		t.Errorf("unchecked write under a lower epoch: %v", err)
	}
	if row, _, _ := u.Partition(ctx, "t", 0); row.Epoch != 1 {
		t.Errorf("unchecked: partition 0 at epoch %d, want 1 (overwritten)", row.Epoch)
	}
}

// One write takes one partition.
func TestSinkWriteOnePartition(t *testing.T) {
	s, err := OpenSink(filepath.Join(t.TempDir(), "sink.db"), "a", true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(context.Background(), 1, append(msgs(0, 0), msgs(1, 0)...)...); err == nil {
		t.Error("a write of two partitions' messages succeeded")
	}
}
