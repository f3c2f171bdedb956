package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// The table has one row per class, counts runs and anomalies per class,
// and names the seeds; a failing run's seed is saved with its classes.
func TestPrintTableAndSaveFailingSeed(t *testing.T) {
	dirty := &campaign.Report{
		Anomalies: map[campaign.Class][]campaign.Anomaly{
			campaign.SplitBrain: {{Class: campaign.SplitBrain}},
			campaign.Duplicate:  {{Class: campaign.Duplicate}, {Class: campaign.Duplicate}},
		},
		DuplicatesBy:  map[campaign.Kind]int{campaign.PauseMember: 2},
		LongestOrphan: 1500 * time.Millisecond, OrphanPartition: 3,
	}
	clean := &campaign.Report{Anomalies: map[campaign.Class][]campaign.Anomaly{}, LongestOrphan: time.Second}
	results := []runResult{
		{seed: 11, report: dirty, applied: map[campaign.Kind]int{campaign.PauseMember: 1}},
		{seed: 12, report: clean, applied: map[campaign.Kind]int{campaign.KillMember: 2}},
	}
	var b strings.Builder
	printTable(&b, results)
	out := b.String()
	for _, c := range campaign.Classes {
		if strings.Count(out, "\n"+string(c)+" ") != 1 {
			t.Errorf("no single row for %s in:\n%s", c, out)
		}
	}
	for _, want := range []string{"split-brain            1/2   1      11", "duplicate (tolerated)  1/2   2      11",
		"faults applied: kill-9 2, sigstop 1", "duplicates by fault: sigstop 2", "longest orphan: 1.5s (seed 11, partition 3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !results[0].failed() || results[1].failed() {
		t.Errorf("failed: %v, %v; want the split brain's run only", results[0].failed(), results[1].failed())
	}
	dir := t.TempDir()
	saveFailingSeed(dir, results[0])
	saved, err := os.ReadFile(filepath.Join(dir, "failing-seeds.txt"))
	if err != nil || !strings.HasPrefix(string(saved), "11 split-brain=1 ") {
		t.Errorf("failing-seeds.txt = %q, %v; want seed 11 with its split brain", saved, err)
	}
}
