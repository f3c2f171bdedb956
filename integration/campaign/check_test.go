package campaign

import (
	"fmt"
	"testing"
	"time"
)

// Unit tests of Check on synthetic histories: each class must be found in a
// history built to show it, and nothing in the clean history they start from.

var t0 = time.Unix(1_000_000, 0)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

var testBounds = Bounds{Orphan: 2 * time.Second, Rewind: 3}

// clean is a history of one partition read by two claims in turn: A (epoch
// 1, zxid 10) delivers 0..4 and commits 5 (zxid 11), releases; B (epoch 2,
// zxid 20) starts at 5 and delivers 5..9, committing 8 (zxid 21) and 10
// (zxid 22). Offsets 0..9 were acknowledged with values "v<offset>".
func clean() *History {
	h := &History{Partitions: 1, Start: ms(0), End: ms(2000)}
	for o := int64(0); o < 10; o++ {
		h.Acked = append(h.Acked, Ack{Partition: 0, Offset: o, Value: value(o), At: ms(int(o))})
	}
	h.Epochs = []Epoch{{Partition: 0, Epoch: 1, Zxid: 10, At: ms(50)}, {Partition: 0, Epoch: 2, Zxid: 20, At: ms(600)}}
	h.Owners = []Ownership{{Partition: 0, Owner: "A", From: ms(50), To: ms(590)}, {Partition: 0, Owner: "B", From: ms(600)}}
	deliver(h, "A", 1, 100, 0, 1, 2, 3, 4)
	h.Commits = append(h.Commits, Commit{Partition: 0, Value: 5, Version: 1, Zxid: 11, At: ms(500)})
	deliver(h, "B", 2, 700, 5, 6, 7, 8, 9)
	h.Commits = append(h.Commits,
		Commit{Partition: 0, Value: 8, Version: 2, Zxid: 21, At: ms(1000)},
		Commit{Partition: 0, Value: 10, Version: 3, Zxid: 22, At: ms(1200)})
	return h
}

func value(o int64) string { return fmt.Sprintf("v%d", o) }

// deliver records reader delivering offsets of partition 0 under epoch,
// the first at startMs and the next 10 ms apart.
func deliver(h *History, reader string, epoch int64, startMs int, offsets ...int64) {
	for i, o := range offsets {
		h.Deliveries = append(h.Deliveries, Delivery{Reader: reader, Partition: 0, Offset: o, Value: value(o), Epoch: epoch, At: ms(startMs + 10*i)})
	}
}

// dropDelivery removes reader's delivery of offset o.
func dropDelivery(h *History, reader string, o int64) {
	var kept []Delivery
	for _, d := range h.Deliveries {
		if d.Reader != reader || d.Offset != o {
			kept = append(kept, d)
		}
	}
	h.Deliveries = kept
}

// expectOnly fails t unless r found anomalies of exactly the classes want.
func expectOnly(t *testing.T, r *Report, want ...Class) {
	t.Helper()
	for _, c := range Classes {
		wanted := false
		for _, w := range want {
			wanted = wanted || w == c
		}
		if got := r.Count(c); (got > 0) != wanted {
			t.Errorf("%s: %d anomalies %v, want any: %v", c, got, r.Anomalies[c], wanted)
		}
	}
}

func TestCheckCleanHistory(t *testing.T) {
	r := Check(clean(), testBounds)
	expectOnly(t, r)
	if r.Failed() || r.Acked != 10 || r.Delivered != 10 {
		t.Errorf("failed %v, acked %d, delivered %d: want clean, 10, 10", r.Failed(), r.Acked, r.Delivered)
	}
	if r.LongestOrphan != 10*time.Millisecond {
		t.Errorf("longest orphan %s, want the 10ms between A's release and B's claim", r.LongestOrphan)
	}
}

func TestCheckFindsEachClass(t *testing.T) {
	cases := []struct {
		name   string
		class  []Class
		mutate func(h *History)
	}{
		{"lost write: 7 never read, 8 was", []Class{LostWrite, PollSkip}, func(h *History) { dropDelivery(h, "B", 7) }},
		{"unseen: 9 never read, nothing after it", []Class{Unseen}, func(h *History) { dropDelivery(h, "B", 9) }},
		{"poll skip: B jumps from 6 to 8, 7 read by no one but acknowledged", []Class{PollSkip, LostWrite}, func(h *History) {
			dropDelivery(h, "B", 7)
		}},
		{"no poll skip over an offset that does not exist", nil, func(h *History) {
			dropDelivery(h, "B", 7)
			h.Acked = append(h.Acked[:7], h.Acked[8:]...)
		}},
		{"nonmonotonic poll: B reads 6 again after 9", []Class{NonmonotonicPoll, Duplicate}, func(h *History) {
			deliver(h, "B", 2, 745, 6)
		}},
		{"inconsistent offsets: 3 read with another value", []Class{InconsistentOffsets}, func(h *History) {
			h.Deliveries[3].Value = "other"
		}},
		{"duplicate: B killed before committing 10, C reads 8 and 9 again", []Class{Duplicate}, func(h *History) {
			h.Commits = h.Commits[:2]
			h.Epochs = append(h.Epochs, Epoch{Partition: 0, Epoch: 3, Zxid: 30, At: ms(1500)})
			deliver(h, "C", 3, 1600, 8, 9)
			h.Faults = append(h.Faults, Fault{Kind: KillMember, Victim: "B", Start: ms(1300), End: ms(1300)})
		}},
		{"split brain: A delivers after B started", []Class{SplitBrain, Duplicate}, func(h *History) {
			deliver(h, "A", 1, 750, 5)
		}},
		{"zombie commit: A's commit of 6 written after epoch 2", []Class{ZombieCommit, Duplicate}, func(h *History) {
			deliver(h, "A", 1, 145, 5)
			h.Commits[1].Zxid, h.Commits[2].Zxid = 22, 23
			h.Commits = append(h.Commits, Commit{Partition: 0, Value: 6, Version: 4, Zxid: 21, At: ms(650)})
		}},
		{"commit regression: 10 then 8", []Class{CommitRegression}, func(h *History) {
			h.Commits = append(h.Commits, Commit{Partition: 0, Value: 8, Version: 4, Zxid: 23, At: ms(1300)})
		}},
		{"orphan: B claims 3s after A released", []Class{Orphan}, func(h *History) {
			h.Owners[1].From = ms(3590)
			h.End = ms(4000)
		}},
		{"orphan at the end: B released, nobody took over", []Class{Orphan}, func(h *History) {
			h.Owners[1].To = ms(1300)
			h.End = ms(4000)
		}},
		{"no orphan after the end: B released after it", nil, func(h *History) {
			h.Owners[1].To = ms(2100)
			h.Owners = append(h.Owners, Ownership{Partition: 0, Owner: "C", From: ms(6000)})
		}},
		{"handoff skip: B starts at 6, the commit said 5", []Class{HandoffSkip, LostWrite}, func(h *History) {
			dropDelivery(h, "B", 5)
		}},
		{"handoff rewind: B starts below the commit", []Class{HandoffRewind, Duplicate}, func(h *History) {
			deliver(h, "B", 2, 690, 4)
		}},
		{"handoff rewind beyond the window: 5 delivered again, commit lost", []Class{HandoffRewind, Duplicate}, func(h *History) {
			h.Commits[0].Value = 0
			deliver(h, "B", 2, 640, 0, 1, 2, 3, 4)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := clean()
			c.mutate(h)
			r := Check(h, testBounds)
			expectOnly(t, r, c.class...)
			wantFailed := false
			for _, cl := range c.class {
				wantFailed = wantFailed || !cl.Tolerated()
			}
			if r.Failed() != wantFailed {
				t.Errorf("Failed() = %v, want %v", r.Failed(), wantFailed)
			}
		})
	}
}

// A reset between two states excuses a lower offset, a rewound handoff and
// a reader going back; so does a reset that started before the state
// before the lower one and ended after it (the command planned, commits
// went on, then it wrote).
func TestCheckResetExcuses(t *testing.T) {
	h := clean()
	h.Resets = append(h.Resets, Reset{Partition: 0, At: ms(1100), End: ms(1265)})
	h.Commits = append(h.Commits, Commit{Partition: 0, Value: -1, Version: 0, At: ms(1260)}, Commit{Partition: 0, Value: 2, Version: 0, Zxid: 24, At: ms(1270)})
	h.Epochs = append(h.Epochs, Epoch{Partition: 0, Epoch: 3, Zxid: 23, At: ms(1260)}, Epoch{Partition: 0, Epoch: 4, Zxid: 25, At: ms(1280)})
	deliver(h, "B", 4, 1300, 2, 3, 4, 5, 6, 7, 8, 9)
	r := Check(h, Bounds{Orphan: testBounds.Orphan, Rewind: 10})
	expectOnly(t, r, Duplicate)
}

func TestBlameAttributesDuplicatesToTheLastFaultBefore(t *testing.T) {
	h := clean()
	h.Faults = []Fault{
		{Kind: CutClient, Victim: "A", Start: ms(200), End: ms(300)},
		{Kind: KillMember, Victim: "A", Start: ms(400), End: ms(400)},
		{Kind: PauseMember, Victim: "B", Start: ms(5000), End: ms(6000)},
	}
	deliver(h, "B", 2, 800, 4)
	r := Check(h, testBounds)
	if r.DuplicatesBy[KillMember] != 1 || len(r.DuplicatesBy) != 1 {
		t.Errorf("duplicates by fault %v, want one, by %s", r.DuplicatesBy, KillMember)
	}

	// A reset of the partition between the two deliveries explains the
	// duplicate, whatever started after it.
	h.Resets = append(h.Resets, Reset{Partition: 0, At: ms(350), End: ms(450)})
	h.Faults = append(h.Faults, Fault{Kind: Join, Victim: "C", Start: ms(460), End: ms(460)})
	r = Check(h, testBounds)
	if r.DuplicatesBy[ResetOffsets] != 1 || len(r.DuplicatesBy) != 1 {
		t.Errorf("duplicates by fault %v, want one, by %s", r.DuplicatesBy, ResetOffsets)
	}
}

func TestRewindBound(t *testing.T) {
	if got := RewindBound(100, 100*time.Millisecond, 2900*time.Millisecond, 5); got != 305 {
		t.Errorf("RewindBound = %d, want 305", got)
	}
}

// The fence bounds by time what a claim delivers without committing, not
// by count: a claim that catches up a backlog delivers far more than the
// production rate in that time. A handoff that delivers again more than
// Bounds.Rewind offsets is a rewind only if the earlier claims delivered
// them over more than Bounds.Window.
func TestCheckRewindOfABacklogWithinTheWindow(t *testing.T) {
	h := clean()
	h.Commits = h.Commits[:1] // B's commits of 8 and 10 failed
	h.Epochs = append(h.Epochs, Epoch{Partition: 0, Epoch: 3, Zxid: 30, At: ms(1500)})
	deliver(h, "C", 3, 1500, 5, 6, 7, 8, 9) // B delivered 5..9 within 40 ms
	r := Check(h, Bounds{Orphan: testBounds.Orphan, Rewind: testBounds.Rewind, Window: time.Second})
	expectOnly(t, r, Duplicate)
	r = Check(h, Bounds{Orphan: testBounds.Orphan, Rewind: testBounds.Rewind, Window: 30 * time.Millisecond})
	expectOnly(t, r, Duplicate, HandoffRewind)
}
