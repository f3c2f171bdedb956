package integration

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Unit tests of the history checker on synthetic histories: no servers, no
// sleeping, the same result every run.

// synth builds a history; times are milliseconds after its origin.
type synth struct{ d historyData }

func newSynth(partitions int32) *synth {
	return &synth{d: historyData{origin: time.Unix(1_000_000, 0), topic: "t", partitions: partitions}}
}

func (s *synth) at(ms int) time.Time { return s.d.origin.Add(time.Duration(ms) * time.Millisecond) }

// deliver records instance delivering offsets of p, the first at ms and the
// next ones step ms apart.
func (s *synth) deliver(instance int, p int32, ms, step int, offsets ...int64) *synth {
	for i, o := range offsets {
		s.d.deliveries = append(s.d.deliveries, hDelivery{instance: instance, partition: p, offset: o,
			at: s.at(ms + i*step), seq: len(s.d.deliveries)})
	}
	return s
}

// span returns the offsets from..to inclusive.
func span(from, to int64) []int64 {
	var out []int64
	for o := from; o <= to; o++ {
		out = append(out, o)
	}
	return out
}

func (s *synth) write(p int32, value int64, version int32, ms int) *synth {
	s.d.writes = append(s.d.writes, offsetWrite{partition: p, value: value, version: version, at: s.at(ms)})
	return s
}

func (s *synth) reset(p int32, value int64, ms int) *synth {
	s.d.resets = append(s.d.resets, offsetReset{partition: p, value: value, at: s.at(ms)})
	return s
}

// fault records a fault from start to end (end < 0: never ended).
func (s *synth) fault(name string, start, end int) *synth {
	f := faultSpan{name: name, start: s.at(start)}
	if end >= 0 {
		f.end = s.at(end)
	}
	s.d.faults = append(s.d.faults, f)
	return s
}

func (s *synth) snap(ms int, ids []string, owners ...string) *synth {
	o := make(map[int32]string)
	for p, id := range owners {
		if id != "" {
			o[int32(p)] = id
		}
	}
	s.d.snapshots = append(s.d.snapshots, ownerSnapshot{at: s.at(ms), ids: ids, owners: o})
	return s
}

func (s *synth) check(exp expectation) *historyReport { return checkHistory(&s.d, exp) }

// expectFailed fails t unless exactly the invariants in want were violated.
func expectFailed(t *testing.T, r *historyReport, want ...invariant) {
	t.Helper()
	for _, inv := range invariants {
		wanted := false
		for _, w := range want {
			wanted = wanted || w == inv
		}
		if r.failed(inv) != wanted {
			t.Errorf("%s violated = %v, want %v; violations: %v", inv, r.failed(inv), wanted, r.violations)
		}
	}
}

func TestHistoryLost(t *testing.T) {
	t.Run("all delivered, some twice", func(t *testing.T) {
		s := newSynth(2).deliver(1, 0, 0, 1, span(0, 9)...).deliver(2, 0, 50, 1, 5, 6).deliver(1, 1, 0, 1, span(0, 4)...)
		r := s.check(expectation{produced: map[int32]int64{0: 10, 1: 5}})
		expectFailed(t, r)
		if r.missing != 0 || r.produced != 15 || r.distinct != 15 || r.deliveries != 17 {
			t.Errorf("missing %d produced %d distinct %d deliveries %d, want 0 15 15 17", r.missing, r.produced, r.distinct, r.deliveries)
		}
	})
	t.Run("gaps", func(t *testing.T) {
		s := newSynth(2).deliver(1, 0, 0, 1, 0, 1, 2, 3, 5, 6, 9)
		r := s.check(expectation{produced: map[int32]int64{0: 10, 1: 2}})
		expectFailed(t, r, invLost)
		if r.missing != 5 {
			t.Errorf("missing %d, want 5", r.missing)
		}
		if v := strings.Join(r.violations[invLost], "\n"); !strings.Contains(v, "partition 0: 3 of offsets [0, 10) never delivered: 4, 7-8") ||
			!strings.Contains(v, "partition 1: 2 of offsets [0, 2) never delivered: 0-1") {
			t.Errorf("violations:\n%s", v)
		}
	})
	t.Run("from a starting offset", func(t *testing.T) {
		s := newSynth(1).deliver(1, 0, 0, 1, span(5, 9)...)
		expectFailed(t, s.check(expectation{produced: map[int32]int64{0: 10}, from: map[int32]int64{0: 5}}))
		expectFailed(t, s.check(expectation{produced: map[int32]int64{0: 10}}), invLost)
	})
}

func TestHistoryBackwards(t *testing.T) {
	cases := []struct {
		name   string
		build  func(s *synth)
		fail   bool
		figure func(r *historyReport) string // "" when the figures are right
	}{
		{"increasing, with coalesced sets and an equal value", func(s *synth) {
			s.write(0, -1, -1, 0).write(0, 10, 0, 10).write(0, 20, 3, 20).write(0, 20, 4, 30)
		}, false, func(r *historyReport) string {
			if r.missedSets != 2 || r.offsetWrites != 4 {
				return "want 2 missed sets, 4 states"
			}
			return ""
		}},
		{"decrease without a reset", func(s *synth) {
			s.write(0, 10, 0, 0).write(0, 20, 1, 10).write(0, 15, 2, 20)
		}, true, nil},
		{"reset, then the decrease", func(s *synth) {
			s.write(0, 500, 7, 0).reset(0, 10, 100).write(0, 10, 8, 110).write(0, 12, 9, 120)
		}, false, func(r *historyReport) string {
			if r.resetsUsed != 1 || r.resetsUnused != 0 {
				return "want the reset used"
			}
			return ""
		}},
		{"a reset excuses one decrease only", func(s *synth) {
			s.write(0, 500, 7, 0).reset(0, 10, 100).write(0, 10, 8, 110).write(0, 30, 9, 120).write(0, 20, 10, 130)
		}, true, nil},
		{"decrease below the reset's value", func(s *synth) {
			s.write(0, 500, 7, 0).reset(0, 100, 100).write(0, 50, 8, 110)
		}, true, nil},
		{"commit in flight seen after the reset, then the reset", func(s *synth) {
			s.write(0, 500, 7, 0).reset(0, 10, 100).write(0, 510, 8, 101).write(0, 10, 9, 105)
		}, false, nil},
		{"reset coalesced with the next commit", func(s *synth) {
			s.write(0, 500, 7, 0).reset(0, 10, 100).write(0, 14, 10, 120)
		}, false, nil},
		{"reset noted after the decrease was seen", func(s *synth) {
			s.write(0, 500, 7, 0).write(0, 10, 8, 100).reset(0, 10, 101)
		}, true, func(r *historyReport) string {
			if r.resetsUnused != 1 {
				return "want the reset unused"
			}
			return ""
		}},
		{"reset of another partition", func(s *synth) {
			s.write(0, 500, 7, 0).reset(1, 10, 100).write(0, 10, 8, 110)
		}, true, nil},
		{"deletion without a reset", func(s *synth) {
			s.write(0, 500, 7, 0).write(0, -1, -1, 100)
		}, true, func(r *historyReport) string {
			if r.deletions != 1 {
				return "want one deletion"
			}
			return ""
		}},
		{"deletion by a reset of all partitions, then commits again", func(s *synth) {
			s.write(0, 500, 7, 0).write(1, 300, 3, 0).reset(allPartitionsReset, -1, 100).
				write(0, -1, -1, 101).write(1, -1, -1, 101).write(0, 3, 0, 200).write(1, 5, 2, 210)
		}, false, func(r *historyReport) string {
			if r.resetsUsed != 2 || r.deletions != 2 {
				return "want one reset used per partition and two deletions"
			}
			return ""
		}},
		{"re-creation seen as a version restart", func(s *synth) {
			s.write(0, 40, 9, 0).write(0, 45, 1, 100)
		}, false, func(r *historyReport) string {
			if r.recreated != 1 {
				return "want one re-creation"
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSynth(2)
			c.build(s)
			r := s.check(expectation{})
			if c.fail {
				expectFailed(t, r, invBackwards)
			} else {
				expectFailed(t, r)
			}
			if c.figure != nil {
				if msg := c.figure(r); msg != "" {
					t.Errorf("%s: %+v", msg, r)
				}
			}
		})
	}
}

func TestHistoryOverlap(t *testing.T) {
	type want struct {
		overlapping, handoffs, unexplained int
		from, to                           int // ms of the first and last overlapping delivery
	}
	cases := []struct {
		name  string
		build func(s *synth)
		want  want
	}{
		{"clean handoff", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 300, 10, span(111, 120)...)
		}, want{handoffs: 1}},
		{"handoff back and forth", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 200, 10, span(111, 120)...).
				deliver(1, 0, 400, 10, span(121, 130)...).deliver(2, 0, 600, 10, span(131, 132)...)
		}, want{handoffs: 3}},
		{"takeover after a crash redelivers, then hands back", func(s *synth) {
			// 1 delivered 100..110 but committed 105 only; 2 starts at 105.
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 3000, 10, span(105, 140)...).
				deliver(1, 0, 5000, 10, span(141, 150)...)
		}, want{handoffs: 2}},
		{"zombie keeps delivering while the new owner delivers", func(s *synth) {
			// 1 delivers 100..108 up to 80 ms, then goes on at 109 (95 ms)
			// and 110 (105 ms) while 2 delivers from the commit 105 on (90,
			// 100, 110 ms, ...).
			s.deliver(1, 0, 0, 10, span(100, 108)...).deliver(1, 0, 95, 10, 109, 110).
				deliver(2, 0, 90, 10, span(105, 120)...)
		}, want{handoffs: 1, overlapping: 4, from: 90, to: 105}},
		{"handoff at the same instant", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 100, 10, span(111, 120)...)
		}, want{handoffs: 1}},
		{"zombie delivery at the same instant, recorded after the new owner's", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 108)...).deliver(2, 0, 90, 10, span(105, 110)...).deliver(1, 0, 90, 0, 109)
		}, want{handoffs: 1, overlapping: 2, from: 90, to: 90}},
		{"zombie against two successive owners", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 200, 10, span(111, 115)...).
				deliver(3, 0, 300, 10, span(116, 120)...).deliver(1, 0, 350, 10, 111)
		}, want{handoffs: 2, overlapping: 11, from: 200, to: 350}},
		{"zombie after the new owner's only delivery", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 108)...).deliver(2, 0, 90, 0, 105).deliver(1, 0, 95, 10, 109, 110)
		}, want{handoffs: 1, overlapping: 3, from: 90, to: 105}},
		{"zombie at the head of the log while the new owner catches up and follows", func(s *synth) {
			// 1 delivered 40..174 (committed 49) and goes on as new messages
			// arrive; 2 starts at 49, catches up at once, then delivers the
			// same new messages just after 1.
			s.deliver(1, 0, 0, 10, span(40, 174)...).deliver(2, 0, 1350, 0, span(49, 174)...).
				deliver(1, 0, 1360, 25, 175, 176, 177).deliver(2, 0, 1365, 25, 175, 176, 177)
		}, want{handoffs: 1, overlapping: 131, from: 1350, to: 1410}},
		{"regains the partition long after a crash, where it stopped", func(s *synth) {
			// 2 redelivered exactly what 1 had not committed, then handed
			// the partition back to 1 (registered again) with no new message.
			s.deliver(1, 0, 0, 10, span(40, 174)...).deliver(2, 0, 5000, 1, span(49, 174)...).
				deliver(1, 0, 8000, 10, span(175, 180)...)
		}, want{handoffs: 2}},
		{"reset moves the start anywhere", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).reset(0, 0, 150).deliver(2, 0, 200, 10, span(0, 5)...)
		}, want{handoffs: 1}},
		{"start no commit explains", func(s *synth) {
			s.deliver(1, 0, 0, 10, span(100, 110)...).deliver(2, 0, 200, 10, span(50, 55)...)
		}, want{handoffs: 1, unexplained: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSynth(1)
			c.build(s)
			r := s.check(expectation{})
			if c.want.overlapping > 0 {
				expectFailed(t, r, invOverlap)
			} else {
				expectFailed(t, r)
			}
			if r.overlapDeliveries != c.want.overlapping || r.handoffs != c.want.handoffs || len(r.unexplainedStarts) != c.want.unexplained {
				t.Errorf("overlapping %d, handoffs %d, unexplained %d; want %d, %d, %d (%v)",
					r.overlapDeliveries, r.handoffs, len(r.unexplainedStarts), c.want.overlapping, c.want.handoffs, c.want.unexplained, r.violations)
			}
			if c.want.overlapping > 0 && len(r.overlaps) == 1 {
				o := r.overlaps[0]
				if !o.from.Equal(s.at(c.want.from)) || !o.to.Equal(s.at(c.want.to)) {
					t.Errorf("overlap from %s to %s, want +%dms to +%dms", r.rel(o.from), r.rel(o.to), c.want.from, c.want.to)
				}
			}
		})
	}
}

func TestHistoryHandoffGap(t *testing.T) {
	s := newSynth(2).
		deliver(1, 0, 0, 10, span(0, 9)...).deliver(2, 0, 290, 10, span(10, 12)...). // gap 200 ms
		deliver(1, 1, 0, 10, span(0, 4)...).deliver(2, 1, 1040, 10, span(5, 6)...)   // gap 1000 ms
	r := s.check(expectation{})
	if r.handoffs != 2 || r.worstGap != time.Second || !strings.Contains(r.worstGapAt, "partition 1, instance 1 -> 2") {
		t.Errorf("handoffs %d, worst gap %v %s; want 2, 1s on partition 1", r.handoffs, r.worstGap, r.worstGapAt)
	}
}

func TestHistoryDuplicates(t *testing.T) {
	s := newSynth(5).
		// partition 0: a clean handoff that redelivers 10.
		deliver(1, 0, 0, 10, span(0, 10)...).deliver(2, 0, 500, 10, span(10, 12)...).
		// partition 1: 1 is cut off (fault 1000..2000) before committing 8..10.
		deliver(1, 1, 0, 10, span(0, 10)...).fault("cut 1", 1000, 2000).deliver(2, 1, 3000, 10, span(8, 12)...).
		// partition 2: a reset to 0.
		deliver(1, 2, 0, 10, span(0, 5)...).reset(2, 0, 100).deliver(1, 2, 200, 10, span(0, 1)...).
		// partition 3: 1 becomes a zombie at 10085 and overlaps with 2 from
		// 10090 to 10105; 2 redelivers 105..110: 105, 106 inside the
		// overlap, 107 and 108 after the fault, 109 and 110 first delivered
		// by the zombie inside the overlap.
		deliver(1, 3, 10000, 10, span(100, 108)...).fault("zombie 1", 10085, -1).
		deliver(2, 3, 10090, 10, span(105, 110)...).deliver(1, 3, 10095, 10, 109, 110)
	// partition 4: 7 crashes at 20000 but goes on delivering 6..8 as a
	// zombie; 8 takes over at 30000 from 5, which 6 delivered (a clean
	// duplicate: no fault window and 6 was not hit) and redelivers 6..8
	// (after the crash that hit 7, which delivered them).
	s.deliver(6, 4, 20000, 10, span(0, 5)...).deliver(7, 4, 20100, 10, 6, 7, 8).deliver(8, 4, 30000, 10, span(5, 8)...)
	s.d.faults = append(s.d.faults, faultSpan{name: "crash 7", start: s.at(20000), instances: []int{7}})
	r := s.check(expectation{})
	want := map[string]int{dupClean: 2, dupFault: 8, dupReset: 2, dupOverlap: 4}
	if r.dups != 16 || len(r.dupsBy) != len(want) {
		t.Fatalf("duplicates %d by %v, want 16 by %v", r.dups, r.dupsBy, want)
	}
	for k, n := range want {
		if r.dupsBy[k] != n {
			t.Errorf("duplicates %q: %d, want %d (all: %v)", k, r.dupsBy[k], n, r.dupsBy)
		}
	}
}

func TestHistoryConvergence(t *testing.T) {
	ab := []string{"a", "b"}
	cases := []struct {
		name  string
		build func(s *synth)
		exp   expectation
		fail  bool
		after time.Duration // convergence time when it converged
	}{
		{"converges within the bound", func(s *synth) {
			s.fault("kill c", 1000, 1500).snap(1200, ab, "a", "a", "b", "").snap(1700, ab, "a", "a", "b", "b").snap(1800, ab, "a", "a", "b", "b")
		}, expectation{live: ab, within: time.Second}, false, 200 * time.Millisecond},
		{"converges too late", func(s *synth) {
			s.fault("kill c", 1000, 1500).snap(1700, ab, "a", "a", "b", "").snap(3000, ab, "a", "a", "b", "b")
		}, expectation{live: ab, within: time.Second}, true, 1500 * time.Millisecond},
		{"converged before the fault ended counts from the first snapshot after it", func(s *synth) {
			s.snap(100, ab, "a", "a", "b", "b").fault("cut a", 500, 900).snap(950, ab, "a", "a", "b", "b")
		}, expectation{live: ab, within: time.Second}, false, 50 * time.Millisecond},
		{"flaps: counted from the last stable state", func(s *synth) {
			s.fault("kill c", 0, 100).snap(200, ab, "a", "a", "b", "b").snap(300, ab, "a", "", "b", "b").snap(400, ab, "a", "a", "b", "b")
		}, expectation{live: ab, within: time.Second}, false, 300 * time.Millisecond},
		{"never converges", func(s *synth) {
			s.fault("kill c", 0, 100).snap(200, ab, "a", "a", "b", "")
		}, expectation{live: ab, within: time.Second}, true, 0},
		{"a crashed instance still registered", func(s *synth) {
			s.fault("crash c", 0, -1).snap(200, []string{"a", "b", "c"}, "a", "a", "b", "b")
		}, expectation{live: ab, within: time.Second}, true, 0},
		{"live count", func(s *synth) {
			s.fault("crash c", 0, -1).snap(200, ab, "a", "a", "b", "b")
		}, expectation{liveCount: 2, within: time.Second}, false, 200 * time.Millisecond},
		{"owned by an instance that is not registered", func(s *synth) {
			s.snap(200, ab, "a", "a", "b", "c")
		}, expectation{live: ab, within: time.Second}, true, 0},
		{"unbalanced", func(s *synth) {
			s.snap(200, ab, "a", "a", "a", "b")
		}, expectation{live: ab, within: time.Second}, true, 0},
		{"not the expected assignment", func(s *synth) {
			s.snap(200, ab, "a", "b", "a", "b")
		}, expectation{live: ab, want: map[int32]string{0: "a", 1: "a", 2: "b", 3: "b"}, within: time.Second}, true, 0},
		{"the default assignment", func(s *synth) {
			// Sticky's for topic t: partitions 0 and 1 to b, 2 and 3 to a.
			s.snap(200, ab, "b", "b", "a", "a")
		}, expectation{live: ab, assigned: true, within: time.Second}, false, 200 * time.Millisecond},
		{"not the default assignment", func(s *synth) {
			s.snap(200, ab, "a", "a", "b", "b")
		}, expectation{live: ab, assigned: true, within: time.Second}, true, 0},
		{"a failed read is not converged", func(s *synth) {
			s.snap(200, ab, "a", "a", "b", "b")
			s.d.snapshots = append(s.d.snapshots, ownerSnapshot{at: s.at(300), err: errors.New("connection lost")})
		}, expectation{live: ab, within: time.Second}, true, 0},
		{"no snapshot after the fault", func(s *synth) {
			s.snap(200, ab, "a", "a", "b", "b").fault("kill c", 300, 400)
		}, expectation{live: ab, within: time.Second}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSynth(4)
			c.build(s)
			r := s.check(c.exp)
			if c.fail {
				expectFailed(t, r, invConvergence)
			} else {
				expectFailed(t, r)
			}
			if c.after > 0 && (!r.converged || r.convergedAfter != c.after) {
				t.Errorf("converged %v after %v, want after %v (%v)", r.converged, r.convergedAfter, c.after, r.violations)
			}
		})
	}
	t.Run("not checked without a bound", func(t *testing.T) {
		r := newSynth(4).check(expectation{})
		if r.convergeChecked || !r.clean() {
			t.Errorf("checked %v, violations %v", r.convergeChecked, r.violations)
		}
	})
}

func TestHistoryReportOutput(t *testing.T) {
	s := newSynth(1).deliver(1, 0, 0, 10, span(100, 108)...).deliver(1, 0, 95, 10, 109, 110).deliver(2, 0, 90, 10, span(105, 120)...)
	r := s.check(expectation{produced: map[int32]int64{0: 121}, from: map[int32]int64{0: 100}})
	rec := &recordingTB{TB: t}
	r.assertClean(rec)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "overlap: partition 0: 4 deliveries while instances [1 2] both held it") {
		t.Errorf("assertClean reported %q", rec.errors)
	}
	rec.errors = nil
	r.log(rec)
	if len(rec.errors) != 0 || !strings.Contains(strings.Join(rec.logs, "\n"), "VIOLATION overlap") {
		t.Errorf("log wrote %q, errors %q", rec.logs, rec.errors)
	}
}

// recordingTB collects what a report writes.
type recordingTB struct {
	testing.TB
	logs, errors []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
