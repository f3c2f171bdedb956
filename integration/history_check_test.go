package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// checkHistory verifies the four invariants on a recorded history and
// returns the figures and violations. It is a pure function of its input.
func checkHistory(d *historyData, exp expectation) *historyReport {
	r := newHistoryReport(d)
	byPart := deliveriesByPartition(d)
	checkLost(r, byPart, exp)
	checkOffsets(r, d)
	minRegain := exp.minRegain
	if minRegain <= 0 {
		minRegain = defaultMinRegain
	}
	for p := int32(0); p < d.partitions; p++ {
		checkOverlap(r, d, p, byPart[p], minRegain)
	}
	countDuplicates(r, d, byPart)
	checkConvergence(r, d, exp)
	return r
}

// deliveriesByPartition returns each partition's deliveries in time order,
// equal times in recording order.
func deliveriesByPartition(d *historyData) map[int32][]hDelivery {
	out := make(map[int32][]hDelivery)
	for _, dl := range d.deliveries {
		out[dl.partition] = append(out[dl.partition], dl)
	}
	for _, ds := range out {
		slices.SortStableFunc(ds, func(a, b hDelivery) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
	}
	return out
}

// checkLost: every offset in [from[p], produced[p]) was delivered at least
// once.
func checkLost(r *historyReport, byPart map[int32][]hDelivery, exp expectation) {
	seen := make(map[int32]map[int64]bool)
	for p, ds := range byPart {
		seen[p] = make(map[int64]bool)
		for _, d := range ds {
			r.deliveries++
			r.perInstance[d.instance]++
			if !seen[p][d.offset] {
				seen[p][d.offset] = true
				r.distinct++
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(exp.produced)) {
		from, next := exp.from[p], exp.produced[p]
		var ranges []string
		missing := 0
		for o := from; o < next; o++ {
			if seen[p][o] {
				continue
			}
			start := o
			for o+1 < next && !seen[p][o+1] {
				o++
			}
			missing += int(o - start + 1)
			if start == o {
				ranges = append(ranges, fmt.Sprint(start))
			} else {
				ranges = append(ranges, fmt.Sprintf("%d-%d", start, o))
			}
		}
		if next > from {
			r.produced += next - from
		}
		if missing > 0 {
			r.missing += missing
			r.violate(invLost, "partition %d: %d of offsets [%d, %d) never delivered: %s",
				p, missing, from, next, strings.Join(firstN(ranges, 10), ", "))
		}
	}
}

// missingIn returns how many offsets exp expects are not delivered in d.
func missingIn(d *historyData, exp expectation) int {
	r := newHistoryReport(d)
	checkLost(r, deliveriesByPartition(d), expectation{produced: exp.produced, from: exp.from})
	return r.missing
}

// checkOffsets: no committed offset goes backwards except by a reset.
//
// The rule: the states of each partition's offset node are taken in the
// order the recorder saw them (an absent node counts as -1). A state lower
// than the one before it is a decrease. A decrease is allowed when a reset
// of that partition was noted at or before the time the state was seen, the
// new value is not below the reset's value, and that reset has not excused
// a decrease of that partition yet; the earliest such reset excuses it.
// Every other decrease is a violation.
//
// So a reset excuses exactly one decrease per partition it covers, the first
// one seen after it, and
// not the writes around it: a commit that was in flight when the test noted
// the reset may still be seen after it (an increase, allowed), and the
// reset's own write may be coalesced with the first commit after it (the
// decrease is then seen to that commit's value, which is not below the
// reset's).
func checkOffsets(r *historyReport, d *historyData) {
	byPart := make(map[int32][]offsetWrite)
	for _, w := range d.writes {
		byPart[w.partition] = append(byPart[w.partition], w)
	}
	used := make([]map[int32]bool, len(d.resets)) // reset -> partitions whose decrease it excused
	for j := range used {
		used[j] = make(map[int32]bool)
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		ws := byPart[p]
		for i, w := range ws {
			r.offsetWrites++
			if i == 0 {
				continue
			}
			prev := ws[i-1]
			switch {
			case w.deleted() && !prev.deleted():
				r.deletions++
			case !w.deleted() && !prev.deleted() && w.version < prev.version:
				r.recreated++
			case !w.deleted() && !prev.deleted() && w.version > prev.version+1:
				r.missedSets += int(w.version - prev.version - 1)
			}
			if w.value >= prev.value {
				continue
			}
			excused := false
			for j, rs := range d.resets {
				if !used[j][p] && rs.covers(p) && !rs.at.After(w.at) && w.value >= rs.value {
					used[j][p], excused = true, true
					r.resetsUsed++
					break
				}
			}
			if !excused {
				r.violate(invBackwards, "partition %d: committed offset %d -> %d (version %d -> %d) seen at %s, no reset excuses it",
					p, prev.value, w.value, prev.version, w.version, r.rel(w.at))
			}
		}
	}
	for j := range d.resets {
		if len(used[j]) == 0 {
			r.resetsUnused++
		}
	}
}

// Reasons for a duplicate delivery, in the order they are tried.
const (
	dupOverlap = "during an overlap"      // either delivery inside an overlap window of the partition
	dupReset   = "after a reset"          // a reset of the partition came between the two deliveries
	dupFault   = "after a fault"          // a fault was going on between the two deliveries
	dupClean   = "clean (no fault/reset)" // none of the above: a clean rebalance redelivered
)

// countDuplicates counts deliveries of an offset delivered before and gives
// each a reason: the first that applies of
//   - dupOverlap: this delivery or the first one of the offset lies in an
//     overlap window of the partition;
//   - dupReset: a reset of the partition was noted after the first delivery
//     of the offset and at or before this one;
//   - dupFault: a fault that hit given instances started at or before this
//     delivery, and one of them delivered the offset before; or a fault
//     without instances started at or before this delivery and had not
//     ended before the first one (a fault never ended counts as an instant);
//   - dupClean: none of these, a clean rebalance redelivered.
func countDuplicates(r *historyReport, d *historyData, byPart map[int32][]hDelivery) {
	for p, ds := range byPart {
		var windows [][2]time.Time
		for _, o := range r.overlaps {
			if o.partition == p {
				windows = append(windows, [2]time.Time{o.from, o.to})
			}
		}
		earlier := make(map[int64][]hDelivery)
		for _, dl := range ds {
			before := earlier[dl.offset]
			earlier[dl.offset] = append(before, dl)
			if len(before) == 0 {
				continue
			}
			r.dups++
			r.dupsBy[dupReason(d, p, before, dl.at, windows)]++
		}
	}
}

// dupReason classifies a delivery at at of an offset delivered before (the
// deliveries in before, in time order).
func dupReason(d *historyData, p int32, before []hDelivery, at time.Time, overlaps [][2]time.Time) string {
	firstAt := before[0].at
	for _, w := range overlaps {
		for _, t := range []time.Time{firstAt, at} {
			if !t.Before(w[0]) && !t.After(w[1]) {
				return dupOverlap
			}
		}
	}
	for _, rs := range d.resets {
		if rs.covers(p) && rs.at.After(firstAt) && !rs.at.After(at) {
			return dupReset
		}
	}
	for _, f := range d.faults {
		if f.start.After(at) {
			continue
		}
		if f.instances == nil && !f.until().Before(firstAt) {
			return dupFault
		}
		for _, b := range before {
			if slices.Contains(f.instances, b.instance) {
				return dupFault
			}
		}
	}
	return dupClean
}
