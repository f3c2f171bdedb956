package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// printTable prints one row per anomaly class (runs with any, total, the
// seeds), then the faults applied by kind, the duplicates by the fault that
// caused them and the longest orphan.
func printTable(w io.Writer, results []runResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "class\truns\ttotal\tseeds\n")
	for _, c := range campaign.Classes {
		runs, total, seeds := 0, 0, []string{}
		for _, r := range results {
			if r.report == nil || r.report.Count(c) == 0 {
				continue
			}
			runs++
			total += r.report.Count(c)
			seeds = append(seeds, fmt.Sprint(r.seed))
		}
		note := ""
		if c.Tolerated() {
			note = " (tolerated)"
		}
		fmt.Fprintf(tw, "%s%s\t%d/%d\t%d\t%s\n", c, note, runs, len(results), total, strings.Join(seeds, " "))
	}
	tw.Flush()

	applied, dups := make(map[campaign.Kind]int), make(map[campaign.Kind]int)
	var longest time.Duration
	var longestSeed uint64
	var longestPartition int32
	acked, delivered, sendFailures := 0, 0, 0
	for _, r := range results {
		for k, n := range r.applied {
			applied[k] += n
		}
		if r.err != nil {
			fmt.Fprintf(w, "seed %d: not checked: %v\n", r.seed, r.err)
		}
		if r.report == nil {
			continue
		}
		for k, n := range r.report.DuplicatesBy {
			dups[k] += n
		}
		acked += r.report.Acked
		delivered += r.report.Delivered
		sendFailures += r.failedTx
		if r.report.LongestOrphan > longest {
			longest, longestSeed, longestPartition = r.report.LongestOrphan, r.seed, r.report.OrphanPartition
		}
	}
	fmt.Fprintf(w, "faults applied: %s\n", counts(applied, campaign.Kinds))
	fmt.Fprintf(w, "duplicates by fault: %s\n", counts(dups, append(slices.Clone(campaign.Kinds), "none")))
	fmt.Fprintf(w, "messages: %d acknowledged, %d delivered, %d sends failed\n", acked, delivered, sendFailures)
	if longest > 0 {
		fmt.Fprintf(w, "longest orphan: %s (seed %d, partition %d)\n", longest.Round(time.Millisecond), longestSeed, longestPartition)
	} else {
		fmt.Fprintln(w, "longest orphan: none")
	}
}

func counts(m map[campaign.Kind]int, order []campaign.Kind) string {
	var parts []string
	for _, k := range order {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// saveFailingSeed appends the seed, its classes and its directory to
// failing-seeds.txt.
func saveFailingSeed(out string, r runResult) {
	var classes []string
	if r.report != nil {
		for _, c := range campaign.Classes {
			if n := r.report.Count(c); n > 0 && !c.Tolerated() {
				classes = append(classes, fmt.Sprintf("%s=%d", c, n))
			}
		}
	}
	if r.err != nil {
		classes = append(classes, "error: "+r.err.Error())
	}
	f, err := os.OpenFile(filepath.Join(out, "failing-seeds.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s %s\n", r.seed, strings.Join(classes, " "), r.dir)
}

// writeReport saves the history (history.json) and every anomaly
// (anomalies.txt) in the run's directory.
func writeReport(r *runResult, h *campaign.History) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.dir, "history.json"), data, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for _, c := range campaign.Classes {
		for _, a := range r.report.Anomalies[c] {
			fmt.Fprintf(&b, "%s %s\n", a.At.Format("15:04:05.000"), a)
		}
	}
	fmt.Fprintf(&b, "duplicates by fault: %v\nlongest orphan: %s (partition %d)\n", r.report.DuplicatesBy, r.report.LongestOrphan, r.report.OrphanPartition)
	return os.WriteFile(filepath.Join(r.dir, "anomalies.txt"), []byte(b.String()), 0o644)
}
