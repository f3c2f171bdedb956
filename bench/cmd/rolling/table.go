package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// combine makes one row per group from its rounds: the most moved,
// duplicated and lost of any round, the median (the lower middle one) of
// each duration; acked, delivered and steps are those of the round with
// the median deploy.
func combine(rounds []row, groups []string) []row {
	var out []row
	for _, g := range groups {
		var rs []row
		for _, r := range rounds {
			if r.Group == g {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		median := func(f func(row) time.Duration) time.Duration {
			ds := make([]time.Duration, len(rs))
			for i, r := range rs {
				ds[i] = f(r)
			}
			slices.Sort(ds)
			return ds[(len(ds)-1)/2]
		}
		byDeploy := slices.Clone(rs)
		slices.SortFunc(byDeploy, func(a, b row) int { return int(a.Deploy - b.Deploy) })
		c := byDeploy[(len(byDeploy)-1)/2]
		c.Round = 0
		for _, r := range rs {
			c.Moved, c.Dups, c.Lost = max(c.Moved, r.Moved), max(c.Dups, r.Dups), max(c.Lost, r.Lost)
		}
		c.WaitP50 = median(func(r row) time.Duration { return r.WaitP50 })
		c.WaitP99 = median(func(r row) time.Duration { return r.WaitP99 })
		c.WaitMax = median(func(r row) time.Duration { return r.WaitMax })
		c.Stalled = median(func(r row) time.Duration { return r.Stalled })
		c.ProdStall = median(func(r row) time.Duration { return r.ProdStall })
		out = append(out, c)
	}
	return out
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%d", d.Milliseconds()) }

// printTable prints the rows as a Markdown table.
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| group | moved | waited p50 / p99 / max (ms) | duplicates | all stalled (ms) | lost | acked | deploy (s) | producer stalled (ms) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		name := r.Group
		if r.Round > 0 {
			name = fmt.Sprintf("%s (round %d)", r.Group, r.Round)
		}
		fmt.Fprintf(w, "| %s | %d | %s / %s / %s | %d | %s | %d | %d | %.1f | %s |\n",
			name, r.Moved, ms(r.WaitP50), ms(r.WaitP99), ms(r.WaitMax), r.Dups, ms(r.Stalled), r.Lost, r.Acked, r.Deploy.Seconds(), ms(r.ProdStall))
	}
}
