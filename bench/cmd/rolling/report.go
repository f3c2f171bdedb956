package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// row is one group's figures over its deploy (see the package doc for
// each definition).
type row struct {
	Group     string        `json:"group"`
	Moved     int           `json:"moved"`      // partitions delivered, from the deploy's start on, by an instance other than their owner before it
	GapP50    time.Duration `json:"gap_p50_ns"` // per partition: its longest gap between consecutive deliveries over the deploy
	GapP99    time.Duration `json:"gap_p99_ns"`
	GapMax    time.Duration `json:"gap_max_ns"`
	Dups      int           `json:"duplicates"`          // offsets delivered more than once
	Stalled   time.Duration `json:"stalled_ns"`          // sum of the gaps longer than -stall in which no partition delivered anything
	ProdStall time.Duration `json:"producer_stalled_ns"` // the same over the producer's acknowledgements: the machine's share of the stalls
	Lost      int           `json:"lost"`                // acknowledged offsets never delivered
	Acked     int           `json:"acked"`
	Delivered int           `json:"delivered"`
	Deploy    time.Duration `json:"deploy_ns"` // from the first close to the last stable assignment
	Steps     []step        `json:"steps"`
}

// measure computes a row from a group's ledger, its owners before the
// deploy and the deploy's window [t0, t1].
func measure(l *ledger, before map[int32]int, t0, t1 time.Time, opts options) row {
	ds, acked, delivered := l.snapshot()
	r := row{Acked: len(acked), Delivered: len(ds), Deploy: t1.Sub(t0)}
	slices.SortFunc(ds, func(a, b delivery) int { return a.at.Compare(b.at) })

	moved := make(map[int32]bool)
	times := make(map[int32][]time.Time, opts.partitions)
	for _, d := range ds {
		if !d.at.Before(t0) && d.slot != before[d.partition] {
			moved[d.partition] = true
		}
		times[d.partition] = append(times[d.partition], d.at)
	}
	r.Moved = len(moved)

	gaps := make([]time.Duration, 0, opts.partitions)
	for p := range int32(opts.partitions) {
		gaps = append(gaps, longestGap(times[p], t0, t1))
	}
	slices.Sort(gaps)
	r.GapP50, r.GapP99, r.GapMax = percentile(gaps, 50), percentile(gaps, 99), gaps[len(gaps)-1]

	all := make([]time.Time, len(ds))
	for i, d := range ds {
		all[i] = d.at
	}
	r.Stalled = stalled(all, t0, t1, opts.stall)
	r.ProdStall = stalled(l.ackTimes(), t0, t1, opts.stall)

	for _, k := range acked {
		if delivered[k] == 0 {
			r.Lost++
		}
	}
	for _, n := range delivered {
		if n > 1 {
			r.Dups++
		}
	}
	return r
}

// stalled sums the gaps longer than threshold between consecutive times
// (sorted), clipped to [t0, t1].
func stalled(ts []time.Time, t0, t1 time.Time, threshold time.Duration) time.Duration {
	var sum time.Duration
	for i := 1; i < len(ts); i++ {
		a, b := ts[i-1], ts[i]
		if !b.After(t0) || !a.Before(t1) {
			continue
		}
		if gap := earlier(b, t1).Sub(later(a, t0)); gap > threshold {
			sum += gap
		}
	}
	return sum
}

// longestGap is the longest interval between consecutive times (sorted)
// that ends inside (t0, t1] or spans t1, counting from the last time at or
// before t0 (t0 itself when there is none); a partition with no delivery
// after its last one counts from there to t1.
func longestGap(ts []time.Time, t0, t1 time.Time) time.Duration {
	var longest time.Duration
	prev := t0
	for _, t := range ts {
		if !t.After(t0) {
			prev = t
			continue
		}
		longest = max(longest, t.Sub(prev))
		if !t.Before(t1) {
			return longest
		}
		prev = t
	}
	return max(longest, t1.Sub(prev))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// percentile is the q-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, q int) time.Duration {
	i := (q*len(sorted) + 99) / 100
	return sorted[max(i-1, 0)]
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%d", d.Milliseconds()) }

// printTable prints the rows as a Markdown table.
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| group | moved | unavailable p50 / p99 / max (ms) | duplicates | all stalled (ms) | producer stalled (ms) | lost | acked | deploy (s) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %s / %s / %s | %d | %s | %s | %d | %d | %.1f |\n",
			r.Group, r.Moved, ms(r.GapP50), ms(r.GapP99), ms(r.GapMax), r.Dups, ms(r.Stalled), ms(r.ProdStall), r.Lost, r.Acked, r.Deploy.Seconds())
	}
}
