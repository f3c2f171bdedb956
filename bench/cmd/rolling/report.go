package main

import (
	"slices"
	"time"
)

// row is one group's figures over its deploy (the package doc defines
// each).
type row struct {
	Group     string        `json:"group"`
	Round     int           `json:"round,omitempty"` // 0 in a row over the rounds
	Moved     int           `json:"moved"`           // partitions delivered, from the deploy's start on, by an instance other than their owner before it
	WaitP50   time.Duration `json:"wait_p50_ns"`     // per partition: its longest wait over the deploy, percentiles over the partitions
	WaitP99   time.Duration `json:"wait_p99_ns"`
	WaitMax   time.Duration `json:"wait_max_ns"`
	Dups      int           `json:"duplicates"`          // offsets delivered more than once
	Stalled   time.Duration `json:"stalled_ns"`          // runs of -stall or more of 10 ms slices of the deploy in which no partition delivered anything while most partitions had a message waiting
	ProdStall time.Duration `json:"producer_stalled_ns"` // the producer's acknowledgement gaps longer than -stall, summed over the deploy: the machine's load
	Stalls    []span        `json:"stalls"`              // when the group stalled, from the deploy's start
	Lost      int           `json:"lost"`                // acknowledged offsets never delivered
	Acked     int           `json:"acked"`
	Delivered int           `json:"delivered"`
	Deploy    time.Duration `json:"deploy_ns"` // from the first close to the last stable assignment
	Steps     []step        `json:"steps"`
}

// slice is the resolution of the group-wide stall.
const slice = 10 * time.Millisecond

// measure computes a row from a group's ledger, its owners before the
// deploy and the deploy's window [t0, t1].
func measure(l *ledger, before map[int32]int, t0, t1 time.Time, opts options) row {
	rec := l.snapshot()
	ds := rec.deliveries
	slices.SortFunc(ds, func(a, b delivery) int { return a.at.Compare(b.at) })
	r := row{Acked: len(rec.acked), Delivered: len(ds), Deploy: t1.Sub(t0)}

	moved := make(map[int32]bool)
	for _, d := range ds {
		if !d.at.Before(t0) && d.slot != before[d.partition] {
			moved[d.partition] = true
		}
	}
	r.Moved = len(moved)

	w := waiting(rec, time.Now())
	longest := make([]time.Duration, 0, opts.partitions)
	for p := range int32(opts.partitions) {
		longest = append(longest, longestWait(w[p], t0, t1))
	}
	slices.Sort(longest)
	r.WaitP50, r.WaitP99, r.WaitMax = percentile(longest, 50), percentile(longest, 99), longest[len(longest)-1]

	at := make([]time.Time, len(ds))
	for i, d := range ds {
		at[i] = d.at
	}
	r.Stalled, r.Stalls = groupStalled(w, at, t0, t1, opts.partitions, opts.stall)
	acks := slices.Clone(rec.ackedAt)
	slices.SortFunc(acks, time.Time.Compare)
	r.ProdStall = gapsLonger(acks, t0, t1, opts.stall)
	r.Lost, r.Dups = lostAndDuplicates(rec)
	return r
}

// lostAndDuplicates counts the acknowledged offsets never delivered and
// the offsets delivered more than once.
func lostAndDuplicates(rec record) (lost, dups int) {
	for _, k := range rec.acked {
		if rec.delivered[k] == 0 {
			lost++
		}
	}
	for _, n := range rec.delivered {
		if n > 1 {
			dups++
		}
	}
	return lost, dups
}

// interval is [from, to).
type interval struct{ from, to time.Time }

// waiting returns, per partition, the intervals in which it had a message
// acknowledged to the producer and not delivered yet, overlapping ones
// merged, in order: from each message's acknowledgement to its first
// delivery (to end for a message never delivered). A message delivered
// before its acknowledgement reached the producer waited for nothing.
func waiting(rec record, end time.Time) map[int32][]interval {
	first := make(map[offsetKey]time.Time, len(rec.delivered))
	for _, d := range rec.deliveries {
		k := offsetKey{d.partition, d.offset}
		if t, ok := first[k]; !ok || d.at.Before(t) {
			first[k] = d.at
		}
	}
	per := make(map[int32][]interval)
	for i, k := range rec.acked {
		to, ok := first[k]
		if !ok {
			to = end
		}
		if to.After(rec.ackedAt[i]) {
			per[k.partition] = append(per[k.partition], interval{rec.ackedAt[i], to})
		}
	}
	for p, ivs := range per {
		slices.SortFunc(ivs, func(a, b interval) int { return a.from.Compare(b.from) })
		merged := ivs[:1]
		for _, iv := range ivs[1:] {
			last := &merged[len(merged)-1]
			if iv.from.After(last.to) {
				merged = append(merged, iv)
			} else if iv.to.After(last.to) {
				last.to = iv.to
			}
		}
		per[p] = merged
	}
	return per
}

// longestWait is the longest of ivs that overlaps [t0, t1], whole.
func longestWait(ivs []interval, t0, t1 time.Time) time.Duration {
	var longest time.Duration
	for _, iv := range ivs {
		if iv.to.After(t0) && iv.from.Before(t1) {
			longest = max(longest, iv.to.Sub(iv.from))
		}
	}
	return longest
}

// groupStalled is the time, in 10 ms slices of [t0, t1), in which no
// partition delivered anything while more than half of the partitions had
// a message waiting at the slice's start, counted in runs of consecutive
// slices that last minSpan at least: the whole group stopped, not a
// pause of the producer (nothing waits then), nor one absent instance's
// share (a sixth waits), nor the 10 to 90 ms in which a loaded machine
// runs none of the consumers. It also returns those runs, as offsets
// from t0.
func groupStalled(w map[int32][]interval, deliveries []time.Time, t0, t1 time.Time, partitions int, minSpan time.Duration) (time.Duration, []span) {
	n := int(t1.Sub(t0) / slice)
	if n <= 0 {
		return 0, nil
	}
	busy := make([]bool, n)
	for _, t := range deliveries {
		if i := int(t.Sub(t0) / slice); !t.Before(t0) && i < n {
			busy[i] = true
		}
	}
	waiters := make([]int, n)
	for _, ivs := range w {
		for _, iv := range ivs {
			// slices whose start s satisfies from <= s < to
			lo := 0
			if iv.from.After(t0) {
				lo = int((iv.from.Sub(t0) + slice - 1) / slice)
			}
			for i := lo; i < n && t0.Add(time.Duration(i)*slice).Before(iv.to); i++ {
				waiters[i]++
			}
		}
	}
	var runs []span
	for i := range n {
		if busy[i] || 2*waiters[i] <= partitions {
			continue
		}
		from := time.Duration(i) * slice
		if k := len(runs) - 1; k >= 0 && runs[k].To == from {
			runs[k].To += slice
		} else {
			runs = append(runs, span{From: from, To: from + slice})
		}
	}
	var stalled time.Duration
	var long []span
	for _, r := range runs {
		if r.To-r.From >= minSpan {
			stalled += r.To - r.From
			long = append(long, r)
		}
	}
	return stalled, long
}

// span is [From, To) from a deploy's start.
type span struct {
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// gapsLonger sums the gaps longer than threshold between consecutive
// times (sorted), clipped to [t0, t1].
func gapsLonger(ts []time.Time, t0, t1 time.Time, threshold time.Duration) time.Duration {
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
