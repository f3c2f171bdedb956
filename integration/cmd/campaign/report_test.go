package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

var t0 = time.Unix(1_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// The table counts runs and distinct seeds, has one row per class (runs
// with any, total, seeds) and one per fault kind (applied, time,
// duplicates against what is allowed, runs above); a failing run's seed is
// saved with its classes.
func TestPrintTableAndSaveFailingSeed(t *testing.T) {
	dirty := runSummary{Seed: 11, Start: at(0), End: at(20_000),
		Faults:            []campaign.Fault{{Kind: campaign.PauseMember, Start: at(1000), End: at(6000)}},
		Anomalies:         map[campaign.Class]int{campaign.SplitBrain: 1, campaign.Duplicate: 130},
		DuplicatesBy:      map[campaign.Kind]int{campaign.PauseMember: 130},
		DuplicatesAllowed: map[campaign.Kind]int64{campaign.PauseMember: 113, "none": 904},
		LongestOrphan:     1500 * time.Millisecond, OrphanPartition: 3, Acked: 4000, Delivered: 4130,
	}
	clean := runSummary{Seed: 12, Start: at(0), End: at(20_000),
		Faults: []campaign.Fault{{Kind: campaign.KillMember, Start: at(1000), End: at(2000)},
			{Kind: campaign.KillMember, Start: at(3000), End: at(3500)}},
		DuplicatesBy:      map[campaign.Kind]int{campaign.KillMember: 8},
		DuplicatesAllowed: map[campaign.Kind]int64{campaign.KillMember: 226, "none": 904},
		LongestOrphan:     time.Second, Acked: 4000, Delivered: 4008, SendFailures: 2,
	}
	replay := clean
	var b strings.Builder
	printTable(&b, []runSummary{dirty, clean, replay})
	out := b.String()
	for _, c := range campaign.Classes {
		if strings.Count(out, "\n"+string(c)+" ") != 1 {
			t.Errorf("no single row for %s in:\n%s", c, out)
		}
	}
	for _, want := range []string{
		"runs: 3, distinct seeds: 2 (run more than once: 12 x2)",
		"fault time: 8s in all, over 1m0s of runs",
		"split-brain            1/3   1      11\n",
		"duplicate (tolerated)  1/3   130    11\n",
		"kill-9           4        3s    16          452      0\n",
		"sigstop          1        5s    130         113      1\n",
		"none             -        -     0           2712     0\n",
		"messages: 12000 acknowledged, 12146 delivered, 4 sends failed",
		"longest orphan: 1.5s (seed 11, partition 3)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !dirty.failed() || clean.failed() {
		t.Errorf("failed: %v, %v; want the split brain's run only", dirty.failed(), clean.failed())
	}
	dir := t.TempDir()
	saveFailingSeed(dir, dirty)
	saved, err := os.ReadFile(filepath.Join(dir, "failing-seeds.txt"))
	if err != nil || !strings.HasPrefix(string(saved), "11 split-brain=1 ") {
		t.Errorf("failing-seeds.txt = %q, %v; want seed 11 with its split brain", saved, err)
	}
}
