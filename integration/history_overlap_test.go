package integration

import (
	"fmt"
	"slices"
	"time"
)

// Overlap: no instance may deliver a partition while another one holds it.
//
// Deliveries alone do not say who held a partition: any time-ordered
// sequence of deliveries can be cut into maximal runs of one instance, and
// each run could be a tenure of its own (a handoff back and forth). What
// separates a handoff from an overlap is where the new holder starts. A
// partition consumer delivers increasing offsets from where it started, and
// it starts at the committed offset. While instance Y holds the partition
// (from its first delivery), only Y can commit (commits are fenced by the
// claim's epoch), so the committed offset when the next holder starts is
// between Y's first offset and one past the highest offset Y delivered.
//
// Where both readings fit, timing decides. The typical zombie keeps
// delivering at the head of the log while the new holder catches up from the
// last commit and then delivers the same new messages: each run of either
// one starts exactly one past its own previous run and also fits as a
// handoff (f = m+1). A legitimate handoff back to an instance that resumes
// exactly where it left off is only possible when it lost the partition
// without committing what it had delivered (a clean release commits
// everything first, so the next holder delivers newer messages and the
// commit moves past them): it had to lose its claim (fence, session expiry,
// processing timeout) and claim again, which takes far longer than
// minRegain.
//
// So the checker walks the runs of a partition in time order (equal times in
// recording order) and keeps the current tenure (instance, first offset s,
// highest offset m). A run of another instance X that starts at an offset f
// is:
//   - a new tenure when a reset of the partition was noted since the current
//     tenure began (it can move the committed offset anywhere);
//   - the continuation of X's own latest tenure, when f = one past the last
//     offset X delivered in it and X's previous delivery of the partition is
//     less than minRegain before f's (it resumed at once), or when f is above
//     that last offset and f is not a possible start (below);
//   - a new tenure (a handoff) when s <= f <= max(s, m+1);
//   - otherwise a new tenure that no commit explains (reported as a figure,
//     not as an overlap: invariant 2 and the lost check see what went wrong).
//
// A tenure holds the partition from its first delivery until the next
// tenure begins (the last one until the end), or until its own last
// delivery if a continuation made that later. An overlap is any two tenures
// of different instances whose holds (in the partition's delivery order)
// intersect; every delivery inside such an intersection counts as
// overlapping, whoever made it.
//
// What it cannot see: a zombie that pauses for minRegain or more and then
// resumes exactly where the other instance's run ended, or that skips
// offsets into the range a handoff explains, is taken for a handoff.

// defaultMinRegain is expectation.minRegain's default.
const defaultMinRegain = 500 * time.Millisecond

// hRun is a maximal run of one instance's deliveries of a partition.
type hRun struct {
	instance   int
	i0, i1     int // indexes of its first and last delivery
	first, top int64
	last       int64
}

// tenure is one instance's hold of a partition as its deliveries show it.
type tenure struct {
	instance    int
	first, last int   // indexes of its first and last delivery
	holdEnd     int   // index of the last delivery made while it held the partition
	start       int64 // offset of its first delivery
	top         int64 // highest offset delivered
	lastOffset  int64 // offset of its last delivery
}

func (t *tenure) extend(r hRun) {
	t.last = r.i1
	t.top = max(t.top, r.top)
	t.lastOffset = r.last
}

func runsOf(ds []hDelivery) []hRun {
	var runs []hRun
	for i, d := range ds {
		if n := len(runs); n > 0 && runs[n-1].instance == d.instance {
			r := &runs[n-1]
			r.i1, r.top, r.last = i, max(r.top, d.offset), d.offset
			continue
		}
		runs = append(runs, hRun{instance: d.instance, i0: i, i1: i, first: d.offset, top: d.offset, last: d.offset})
	}
	return runs
}

// checkOverlap finds the tenures of partition p (its deliveries ds sorted),
// the handoff figures and the overlaps.
func checkOverlap(r *historyReport, d *historyData, p int32, ds []hDelivery, minRegain time.Duration) []*tenure {
	var tenures []*tenure
	latest := make(map[int]*tenure)
	var cur *tenure
	for _, rn := range runsOf(ds) {
		if cur != nil && rn.instance == cur.instance {
			cur.extend(rn)
			continue
		}
		if cur != nil {
			reset := resetBetween(d, p, ds[cur.first].at, ds[rn.i0].at)
			fresh := reset || (cur.start <= rn.first && rn.first <= max(cur.start, cur.top+1))
			old := latest[rn.instance]
			resumed := old != nil && rn.first == old.lastOffset+1 && ds[rn.i0].at.Sub(ds[old.last].at) < minRegain
			if !reset && old != nil && (resumed || (!fresh && rn.first > old.lastOffset)) {
				old.extend(rn)
				continue
			}
			if !fresh {
				r.unexplainedStarts = append(r.unexplainedStarts, fmt.Sprintf(
					"partition %d: instance %d began at offset %d at %s while instance %d held it from offset %d (delivered up to %d)",
					p, rn.instance, rn.first, r.rel(ds[rn.i0].at), cur.instance, cur.start, cur.top))
			}
			r.handoffs++
			if gap := ds[rn.i0].at.Sub(ds[cur.last].at); gap > r.worstGap {
				r.worstGap = gap
				r.worstGapAt = fmt.Sprintf("(partition %d, instance %d -> %d at %s)", p, cur.instance, rn.instance, r.rel(ds[rn.i0].at))
			}
		}
		cur = &tenure{instance: rn.instance, first: rn.i0, last: rn.i1, start: rn.first, top: rn.top, lastOffset: rn.last}
		tenures = append(tenures, cur)
		latest[rn.instance] = cur
	}
	// A tenure holds the partition until the next one begins (the last one
	// until the end), or until its own last delivery if that comes later.
	for i, t := range tenures {
		t.holdEnd = len(ds) - 1
		if i+1 < len(tenures) {
			t.holdEnd = tenures[i+1].first - 1
		}
		t.holdEnd = max(t.holdEnd, t.last)
	}
	reportOverlaps(r, p, ds, tenures)
	return tenures
}

// resetBetween reports whether a reset of p was noted in (from, to].
func resetBetween(d *historyData, p int32, from, to time.Time) bool {
	for _, rs := range d.resets {
		if rs.covers(p) && rs.at.After(from) && !rs.at.After(to) {
			return true
		}
	}
	return false
}

// reportOverlaps marks the deliveries inside the intersection of the holds
// of any two tenures of different instances and reports them.
func reportOverlaps(r *historyReport, p int32, ds []hDelivery, tenures []*tenure) {
	inside := make([]bool, len(ds))
	involved := make(map[int]bool)
	for i, a := range tenures {
		for _, b := range tenures[i+1:] {
			if a.instance == b.instance {
				continue
			}
			lo, hi := max(a.first, b.first), min(a.holdEnd, b.holdEnd)
			if lo > hi {
				continue
			}
			involved[a.instance], involved[b.instance] = true, true
			for k := lo; k <= hi; k++ {
				inside[k] = true
			}
		}
	}
	o := partitionOverlap{partition: p}
	for k, in := range inside {
		if !in {
			continue
		}
		if o.deliveries == 0 {
			o.from = ds[k].at
		}
		o.to = ds[k].at
		o.deliveries++
		if len(o.samples) < 6 {
			o.samples = append(o.samples, fmt.Sprintf("%d@%d %s", ds[k].instance, ds[k].offset, r.rel(ds[k].at)))
		}
	}
	if o.deliveries == 0 {
		return
	}
	for i := range involved {
		o.instances = append(o.instances, i)
	}
	slices.Sort(o.instances)
	r.overlaps = append(r.overlaps, o)
	r.overlapDeliveries += o.deliveries
	r.violate(invOverlap, "partition %d: %d deliveries while instances %v both held it, from %s to %s (%v): %v",
		p, o.deliveries, o.instances, r.rel(o.from), r.rel(o.to), o.to.Sub(o.from).Round(time.Millisecond), o.samples)
}
