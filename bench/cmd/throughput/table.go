package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// target is a throughput ratio we aim for: ours against franz-go's reader.
type target struct {
	ours, theirs string
	want         float64 // the least throughput ratio wanted; 0: a comparison, no target
}

var targets = []target{
	{"handler", "franz-group", 1.1},
	{"messages-buffered", "franz-direct-conv", 0.9},
	{"messages", "franz-direct-conv", 0},
	{"messages", "franz-direct-unbuf", 0},
}

// printTable writes one row per reader (its rate and peak RSS in each
// round, in the order the rounds ran) and the ratios of the targets.
func printTable(w io.Writer, names []string, results map[string][]result, n int) {
	fmt.Fprintf(w, "\n| reader | M msgs/s per round | peak RSS (MB) per round |\n|---|---|---|\n")
	for _, name := range names {
		var rates, rss []string
		for _, r := range results[name] {
			rates = append(rates, fmt.Sprintf("%.2f", r.rate(n)/1e6))
			rss = append(rss, fmt.Sprintf("%.0f", r.peakMB()))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", name, strings.Join(rates, " / "), strings.Join(rss, " / "))
	}
	fmt.Fprintln(w)
	for _, t := range targets {
		ours, theirs := results[t.ours], results[t.theirs]
		if len(ours) == 0 || len(theirs) == 0 {
			continue
		}
		var perRound []string
		for i := range min(len(ours), len(theirs)) {
			perRound = append(perRound, fmt.Sprintf("%.2f", ours[i].rate(n)/theirs[i].rate(n)))
		}
		best := func(rs []result) float64 {
			return slices.Max(rates(rs, n))
		}
		peak := func(rs []result) float64 {
			return slices.Max(peaks(rs))
		}
		want := "no target"
		if t.want > 0 {
			want = fmt.Sprintf("target >= %.1f", t.want)
		}
		fmt.Fprintf(w, "%s / %s: throughput %.2f best of rounds (%s), per round %s; peak RSS %.2f (highest of rounds each)\n",
			t.ours, t.theirs, best(ours)/best(theirs), want, strings.Join(perRound, " / "), peak(ours)/peak(theirs))
	}
}

func rates(rs []result, n int) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.rate(n))
	}
	return out
}

func peaks(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.peakMB())
	}
	return out
}
