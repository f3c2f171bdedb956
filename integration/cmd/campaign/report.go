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

// printTable prints the runs and seeds counted and the time of their
// faults; one row per anomaly class (runs with any, total, the seeds); one
// row per fault kind (applied, their time, the duplicates blamed on them
// against what campaign.AllowedDuplicates allows, the runs above that);
// the messages and the longest orphan.
func printTable(w io.Writer, runs []runSummary) {
	seeds := make(map[uint64]int)
	var faultTime, runTime time.Duration
	for _, r := range runs {
		seeds[r.Seed]++
		for _, d := range campaign.FaultTime(r.Faults) {
			faultTime += d
		}
		if r.End.After(r.Start) {
			runTime += r.End.Sub(r.Start)
		}
	}
	var replayed []string
	for s, n := range seeds {
		if n > 1 {
			replayed = append(replayed, fmt.Sprintf("%d x%d", s, n))
		}
	}
	slices.Sort(replayed)
	fmt.Fprintf(w, "runs: %d, distinct seeds: %d", len(runs), len(seeds))
	if len(replayed) > 0 {
		fmt.Fprintf(w, " (run more than once: %s)", strings.Join(replayed, ", "))
	}
	fmt.Fprintf(w, "\nfault time: %s in all, over %s of runs\n\n", faultTime.Round(time.Second), runTime.Round(time.Second))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "class\truns\ttotal\tseeds\n")
	for _, c := range campaign.Classes {
		n, total, names := 0, 0, []string{}
		for _, r := range runs {
			if r.Anomalies[c] == 0 {
				continue
			}
			n++
			total += r.Anomalies[c]
			names = append(names, fmt.Sprint(r.Seed))
		}
		note := ""
		if c.Tolerated() {
			note = " (tolerated)"
		}
		fmt.Fprintf(tw, "%s%s\t%d/%d\t%d\t%s\n", c, note, n, len(runs), total, seedList(names))
	}
	tw.Flush()
	fmt.Fprintln(w)
	printFaults(w, runs)

	var longest time.Duration
	var longestSeed uint64
	var longestPartition int32
	acked, delivered, sendFailures := 0, 0, 0
	for _, r := range runs {
		if r.Error != "" {
			fmt.Fprintf(w, "seed %d: not checked: %s\n", r.Seed, r.Error)
		}
		acked += r.Acked
		delivered += r.Delivered
		sendFailures += r.SendFailures
		if r.LongestOrphan > longest {
			longest, longestSeed, longestPartition = r.LongestOrphan, r.Seed, r.OrphanPartition
		}
	}
	fmt.Fprintf(w, "messages: %d acknowledged, %d delivered, %d sends failed\n", acked, delivered, sendFailures)
	if longest > 0 {
		fmt.Fprintf(w, "longest orphan: %s (seed %d, partition %d)\n", longest.Round(time.Millisecond), longestSeed, longestPartition)
	} else {
		fmt.Fprintln(w, "longest orphan: none")
	}
}

// printFaults prints one row per fault kind, and one for the duplicates
// blamed on no fault.
func printFaults(w io.Writer, runs []runSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "fault\tapplied\ttime\tduplicates\tallowed\truns above\n")
	for _, k := range append(slices.Clone(campaign.Kinds), "none") {
		applied, dups, above := 0, 0, 0
		var spent time.Duration
		var allowed int64
		for _, r := range runs {
			for _, f := range r.Faults {
				if f.Kind == k {
					applied++
				}
			}
			spent += campaign.FaultTime(r.Faults)[k]
			dups += r.DuplicatesBy[k]
			allowed += r.DuplicatesAllowed[k]
			if int64(r.DuplicatesBy[k]) > r.DuplicatesAllowed[k] {
				above++
			}
		}
		if k == "none" {
			fmt.Fprintf(tw, "%s\t-\t-\t%d\t%d\t%d\n", k, dups, allowed, above)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\n", k, applied, spent.Round(100*time.Millisecond), dups, allowed, above)
	}
	tw.Flush()
}

// seedList names at most ten seeds.
func seedList(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], " ") + fmt.Sprintf(" (+%d more)", len(names)-10)
	}
	return strings.Join(names, " ")
}

// saveFailingSeed appends the seed, its classes and its directory to
// failing-seeds.txt.
func saveFailingSeed(out string, r runSummary) {
	var classes []string
	for _, c := range campaign.Classes {
		if n := r.Anomalies[c]; n > 0 && !c.Tolerated() {
			classes = append(classes, fmt.Sprintf("%s=%d", c, n))
		}
	}
	if r.Error != "" {
		classes = append(classes, "error: "+r.Error)
	}
	f, err := os.OpenFile(filepath.Join(out, "failing-seeds.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s %s\n", r.Seed, strings.Join(classes, " "), r.dir)
}

// writeReport saves the history (history.json) and every anomaly
// (anomalies.txt) in the run's directory.
func writeReport(dir string, h *campaign.History, r *campaign.Report) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "history.json"), data, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for _, c := range campaign.Classes {
		for _, a := range r.Anomalies[c] {
			fmt.Fprintf(&b, "%s %s\n", a.At.Format("15:04:05.000"), a)
		}
	}
	fmt.Fprintf(&b, "duplicates by fault: %v\nlongest orphan: %s (partition %d)\n", r.DuplicatesBy, r.LongestOrphan, r.OrphanPartition)
	return os.WriteFile(filepath.Join(dir, "anomalies.txt"), []byte(b.String()), 0o644)
}
