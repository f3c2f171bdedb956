package main

import (
	"strings"
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// TestSummarize checks the verdict on a hand-made history: member 2 is cut
// off at 1000 ms and back at 5000 ms; partition 0 moves from member 2 to
// member 1 with two messages delivered again, partition 1 moves cleanly
// from member 3 to member 1, and partition 2 misses a message.
func TestSummarize(t *testing.T) {
	w := cutWindow{member: 2, cut: ms(1000), restored: ms(5000)}
	produced := []int64{4, 2, 3}
	deliveries := [][]delivery{
		{ // offsets 2 and 3 delivered by member 2 before the fence, then by member 1
			{0, 2, ms(100)}, {1, 2, ms(900)}, {2, 2, ms(1200)}, {3, 2, ms(1500)},
			{2, 1, ms(4500)}, {3, 1, ms(4510)},
		},
		{{0, 3, ms(100)}, {1, 1, ms(250)}},
		{{0, 1, ms(100)}, {2, 1, ms(300)}},
	}
	s := summarize(produced, deliveries, w)

	if s.produced != 9 || s.consumed != 8 || s.deliveries != 10 {
		t.Errorf("produced %d consumed %d deliveries %d, want 9 8 10", s.produced, s.consumed, s.deliveries)
	}
	if s.lost != 1 || len(s.lostAt) != 1 || s.lostAt[0] != "2/1" {
		t.Errorf("lost %d at %v, want 1 at 2/1", s.lost, s.lostAt)
	}
	if s.twice != 2 || len(s.reasons) != 1 || s.reasons["member 2 cut off: delivered but not committed before the fence"] != 2 {
		t.Errorf("twice %d, reasons %v", s.twice, s.reasons)
	}
	if s.ok() {
		t.Error("a run with a lost message is ok")
	}
	cut, n := s.worst(func(h handoff) bool { return h.afterCut })
	if n != 1 || cut.partition != 0 || cut.from != 2 || cut.to != 1 || cut.gap != ms(3000) {
		t.Errorf("handoffs after the cut: %d, worst %+v; want 1, partition 0 from 2 to 1 after 3s", n, cut)
	}
	clean, n := s.worst(func(h handoff) bool { return !h.afterCut })
	if n != 1 || clean.partition != 1 || clean.gap != ms(150) {
		t.Errorf("clean handoffs: %d, worst %+v; want 1, partition 1 after 150ms", n, clean)
	}

	var out strings.Builder
	s.print(&out, w)
	if !strings.Contains(out.String(), "summary: produced=9 consumed=8 lost=1 twice=2 partitions=3/3 worst_handoff=3s") {
		t.Errorf("summary line missing or wrong:\n%s", out.String())
	}
}

// TestReasonMovedWithoutCut: a message delivered again by another member
// outside the cut is blamed on the move, not on the cut.
func TestReasonMovedWithoutCut(t *testing.T) {
	w := cutWindow{member: 2, cut: ms(1000), restored: ms(5000)}
	got := reason(delivery{5, 3, ms(6000)}, delivery{5, 1, ms(6100)}, w)
	if !strings.Contains(got, "moved from member 3 to member 1") {
		t.Errorf("reason = %q", got)
	}
	got = reason(delivery{5, 2, ms(6000)}, delivery{5, 2, ms(7000)}, w)
	if !strings.Contains(got, "member 2 delivered it again") {
		t.Errorf("reason = %q", got)
	}
}

func TestPartitionList(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{{nil, "-"}, {[]int{3}, "3"}, {[]int{0, 1, 2, 5, 7, 8}, "0-2 5 7-8"}} {
		if got := partitionList(c.in); got != c.want {
			t.Errorf("partitionList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
