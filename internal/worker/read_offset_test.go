package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
)

// readingStore is a Store whose reads return errs in turn, then what it
// holds; it records when each read was made; onRead runs before each
// answer. Any other call panics (the nil Store).
type readingStore struct {
	offsets.Store
	errs   []error
	at     []time.Time
	onRead func(n int)
}

func (s *readingStore) Read(offsets.TopicPartition) (offsets.Stored, error) {
	n := len(s.at)
	s.at = append(s.at, time.Now())
	if s.onRead != nil {
		s.onRead(n + 1)
	}
	if n < len(s.errs) {
		return offsets.Stored{ZkNext: -1, ZkVersion: -1, KafkaNext: -1}, s.errs[n]
	}
	return offsets.Stored{ZkNext: 42, ZkVersion: 3, KafkaNext: -1}, nil
}

// readingOffsets is the test committer whose store is a readingStore.
type readingOffsets struct {
	Offsets
	store *readingStore
}

func (r readingOffsets) Store() offsets.Store { return r.store }

// readOffset reads again every RetryCooldown, reporting each failure but
// Close's, until it reads the stored offset or the worker's context ends.
func TestReadOffsetRetries(t *testing.T) {
	corrupt := func(i int) error { return fmt.Errorf("read %d: offset node holds %q", i, "x") }
	for _, c := range []struct {
		name     string
		errs     []error
		stopAt   int // cancel the worker's context at this read; 0: never
		reads    int
		reported int
		want     error // nil: read 42
	}{
		{name: "at once", reads: 1},
		{name: "after failures", errs: []error{corrupt(1), offsets.ErrGroupClosing, corrupt(3)}, reads: 4, reported: 2},
		{name: "the worker stops", errs: []error{corrupt(1), corrupt(2), corrupt(3)}, stopAt: 2, reads: 2, reported: 2,
			want: context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &readingStore{errs: c.errs}
				var reported []error
				w := newTestWorker(Deps{Offsets: readingOffsets{Offsets: offsets.New(offsets.Config{}, offsets.Deps{}), store: store},
					ReportPartition: func(_ string, _ int32, err error) { reported = append(reported, err) }})
				w.cfg.RetryCooldown = 5 * time.Second
				if c.stopAt > 0 {
					store.onRead = func(n int) {
						if n == c.stopAt {
							w.cancel()
						}
					}
				}
				stored, err := w.readOffset()
				if !errors.Is(err, c.want) || c.want == nil && stored.ZkNext != 42 {
					t.Errorf("readOffset = %+v, %v; want 42 or %v", stored, err, c.want)
				}
				if len(store.at) != c.reads {
					t.Errorf("%d reads, want %d", len(store.at), c.reads)
				}
				for i, d := range between(store.at) {
					if d != 5*time.Second {
						t.Errorf("wait %d: %v, want RetryCooldown (5s)", i+1, d)
					}
				}
				if len(reported) != c.reported {
					t.Errorf("%d failures reported, want %d: %v", len(reported), c.reported, reported)
				}
			})
		})
	}
}
