package worker

import (
	"errors"
	"sync"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// offsetWrites is a ZooKeeper registry that records the fenced commits
// and the rewinds (resets) written.
type offsetWrites struct {
	mu       sync.Mutex
	commits  []int64
	rewinds  []int64
	versions int32
}

func (r *offsetWrites) FetchOffsetVersion(string, int32) (int64, int32, error) { return -1, -1, nil }
func (r *offsetWrites) CommitOffset(string, int32, int64) error                { return nil }
func (r *offsetWrites) ResetOffsets() error                                    { return nil }

func (r *offsetWrites) CommitOffsetFenced(_ *kazoo.PartitionClaim, next int64, _ int32) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits = append(r.commits, next)
	r.versions++
	return r.versions, nil
}

func (r *offsetWrites) RewindOffsetFenced(_ *kazoo.PartitionClaim, next int64, _ int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rewinds = append(r.rewinds, next)
	return nil
}

// A position lost mid-stream: the worker resumes at the log's end (a
// truncation) or start (retention), stores it before anything is handed
// out from there, and reports the typed error. A log end below the
// committed offset is stored as a reset, which ends the claim; either
// way the marks of messages delivered before, past the log's end, never
// count.
func TestResumeAfterLostPosition(t *testing.T) {
	cases := []struct {
		name      string
		committed int64 // the mark committed before the loss (-1: none)
		lost      error
		to        int64
		ok        bool  // consuming goes on at to
		commits   int64 // written as a commit (-1: none)
		rewind    int64 // written as a reset (-1: none)
	}{
		{"truncated above the committed offset", 3,
			&fetch.TruncationError{Topic: "t", Position: 10, LogEnd: 5}, 5, true, 5, -1},
		{"truncated below the committed offset", 8,
			&fetch.TruncationError{Topic: "t", Position: 10, LogEnd: 5}, 5, false, -1, 5},
		{"retention", 3,
			&fetch.RetentionError{Topic: "t", Position: 10, LogStart: 20}, 20, true, 20, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := &offsetWrites{}
			var reported []error
			w := newTestWorker(Deps{
				Offsets:         offsets.New(offsets.Config{}, offsets.Deps{Registry: reg, Session: func() int64 { return 7 }}),
				ReportPartition: func(_ string, _ int32, err error) { reported = append(reported, err) },
			})
			owned := adoptAt(w, testClaim(7), 0)
			var delivered []*sarama.ConsumerMessage
			for o := int64(0); o < 10; o++ {
				m := &sarama.ConsumerMessage{Topic: "t", Offset: o}
				owned.Offer(o)
				owned.OfferMessage(m)
				owned.Delivered(o)
				delivered = append(delivered, m)
			}
			owned.Mark(delivered[c.committed-1], c.committed-1)
			if err := w.deps.Offsets.Commit(owned); err != nil {
				t.Fatal(err)
			}
			reg.commits = nil

			next, ok := w.resumeAfterLoss(owned, c.lost, 10, c.to)
			if ok != c.ok || (ok && next != c.to) {
				t.Fatalf("resumeAfterLoss = %d, %v; want %d, %v", next, ok, c.to, c.ok)
			}
			if len(reported) != 1 || !errors.Is(reported[0], c.lost) {
				t.Fatalf("reported %v, want the lost position", reported)
			}
			if want := c.commits; (want < 0) != (len(reg.commits) == 0) || want >= 0 && reg.commits[0] != want {
				t.Fatalf("commits %v, want %d first (-1: none)", reg.commits, want)
			}
			if want := c.rewind; (want < 0) != (len(reg.rewinds) == 0) || want >= 0 && reg.rewinds[0] != want {
				t.Fatalf("resets %v, want %d (-1: none)", reg.rewinds, want)
			}
			if c.rewind >= 0 && !owned.Lost() {
				t.Fatal("the reset did not end the claim")
			}
			if owned.Mark(delivered[9], 9) {
				t.Fatal("a mark of a message delivered before the loss counted")
			}
		})
	}
}
