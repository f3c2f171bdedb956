package offsets

import (
	"errors"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

// A partition's last commit is the latest one that wrote or failed: a
// commit with nothing to write leaves it, a failure replaces it, a write
// clears the error again.
func TestPartitionLastCommit(t *testing.T) {
	f := newZookeeperFixture(t, commitAnswer{version: 4}, commitAnswer{err: kazoo.ErrClaimLost})
	if got := f.o.LastCommit(); !got.At.IsZero() || got.Err != nil {
		t.Fatalf("before any commit: %+v, want zero", got)
	}
	f.mark(t, 14)
	if err := f.om.Commit(f.o); err != nil {
		t.Fatal(err)
	}
	first := f.o.LastCommit()
	if first.At.IsZero() || first.Err != nil {
		t.Fatalf("after a written commit: %+v, want its time and no error", first)
	}
	if err := f.om.Commit(f.o); err != nil {
		t.Fatal(err)
	}
	if got := f.o.LastCommit(); got != first {
		t.Errorf("a commit with nothing to write changed the last commit: %+v, want %+v", got, first)
	}
	f.mark(t, 20)
	if err := f.om.Commit(f.o); err == nil {
		t.Fatal("the scripted refusal did not fail the commit")
	}
	if got := f.o.LastCommit(); !errors.Is(got.Err, kazoo.ErrClaimLost) || got.At.Before(first.At) {
		t.Errorf("after a refused commit: %+v, want ErrClaimLost at or after %v", got, first.At)
	}
}

// The high-water mark is the higher of the fetches' and the refresh's;
// the lag is measured from the committed offset, -1 while the mark is
// unknown.
func TestPartitionHighWaterMarkAndLag(t *testing.T) {
	f := newZookeeperFixture(t) // committed 10; the bare owner's fetches saw no mark
	if hwm, lag := f.o.HighWaterMark(), f.o.Lag(); hwm != -1 || lag != -1 {
		t.Fatalf("no mark known: high-water mark %d, lag %d; want -1, -1", hwm, lag)
	}
	f.o.SeeHighWaterMark(25)
	f.o.SeeHighWaterMark(20) // an older answer does not move it back
	if hwm, lag := f.o.HighWaterMark(), f.o.Lag(); hwm != 25 || lag != 15 {
		t.Errorf("high-water mark %d, lag %d; want 25, 15", hwm, lag)
	}
}
