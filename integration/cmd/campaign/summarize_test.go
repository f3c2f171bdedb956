package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// testSettings allow each claim 21 duplicates: 10 a second on one
// partition for a commit interval plus a session, plus 10.
var testSettings = runSettings{Duration: 10 * time.Second, Members: 1, Partitions: 1, Rate: 10,
	Session: time.Second, OrphanBound: 3 * time.Second, CommitInterval: 100 * time.Millisecond}

// killedHistory: A (epoch 1) delivers 0..9; a kill-9 from 0.5 s to 1.5 s;
// B (epoch 2) delivers 8 and 9 again at 2 s, after 300 ms without an owner.
func killedHistory() *campaign.History {
	h := &campaign.History{Partitions: 1, Start: at(0), End: at(10_000),
		Epochs: []campaign.Epoch{{Partition: 0, Epoch: 1, Zxid: 10, At: at(50)}, {Partition: 0, Epoch: 2, Zxid: 20, At: at(1900)}},
		Owners: []campaign.Ownership{{Partition: 0, Owner: "A", From: at(50), To: at(1600)}, {Partition: 0, Owner: "B", From: at(1900)}},
		Faults: []campaign.Fault{{Kind: campaign.KillMember, Victim: "m0", Start: at(500), End: at(1500)}},
	}
	for o := range int64(10) {
		v := "v" + string(rune('0'+o))
		h.Acked = append(h.Acked, campaign.Ack{Partition: 0, Offset: o, Value: v, At: at(int(o))})
		h.Deliveries = append(h.Deliveries, campaign.Delivery{Reader: "A", Partition: 0, Offset: o, Value: v, Epoch: 1, At: at(100 + 10*int(o))})
		if o >= 8 {
			h.Deliveries = append(h.Deliveries, campaign.Delivery{Reader: "B", Partition: 0, Offset: o, Value: v, Epoch: 2, At: at(2000 + int(o))})
		}
	}
	h.Commits = []campaign.Commit{{Partition: 0, Value: 8, Version: 1, Zxid: 11, At: at(300)}, {Partition: 0, Value: 10, Version: 2, Zxid: 21, At: at(2100)}}
	return h
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The table over saved runs counts each run, replays included, checks
// every history again (a stale summary does not count), takes a run
// without a history from its summary, reads the settings and send failures
// of a run saved before runs kept a summary from the flags and its log, and
// skips a run that never ended.
func TestSummarizeDirs(t *testing.T) {
	out1, out2 := t.TempDir(), t.TempDir()
	first, err := runDir(out1, 5)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := runDir(out1, 5)
	if err != nil || filepath.Base(replay) != "seed-5.2" {
		t.Fatalf("second run of seed 5 in %q (%v), want seed-5.2", replay, err)
	}
	writeJSON(t, filepath.Join(first, "history.json"), killedHistory())
	stale, _ := summarize(5, testSettings, killedHistory(), 3)
	stale.Anomalies[campaign.HandoffRewind] = 1 // what an older checker said
	if err := stale.save(first); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(replay, "history.json"), killedHistory())
	if err := os.WriteFile(filepath.Join(replay, "run.log"), []byte(" 20.001s producer stopped: 10 acknowledged, 1 failed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onlySummary := filepath.Join(out2, "seed-7")
	if err := os.Mkdir(onlySummary, 0o755); err != nil {
		t.Fatal(err)
	}
	s7 := runSummary{Seed: 7, Settings: testSettings, Start: at(0), End: at(10_000),
		Faults:    []campaign.Fault{{Kind: campaign.PauseMember, Start: at(1000), End: at(3000)}},
		Anomalies: map[campaign.Class]int{campaign.SplitBrain: 1}, Acked: 10, Delivered: 10}
	if err := s7.save(onlySummary); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out2, "seed-9"), 0o755); err != nil {
		t.Fatal(err)
	}

	var b strings.Builder
	code := summarizeDirs(&b, []string{out1, out2}, testSettings)
	got := b.String()
	if code != 1 {
		t.Errorf("exit code %d, want 1 (seed 7's split brain)", code)
	}
	for _, want := range []string{
		"skipped " + filepath.Join(out2, "seed-9") + ": no history.json",
		"1 runs without history.json: counted from their summary.json, not checked again",
		"runs: 3, distinct seeds: 2 (run more than once: 5 x2)",
		"fault time: 4s in all, over 30s of runs",
		"duplicate (tolerated)  2/3   4      5 5\n",
		"split-brain            1/3   1      7\n",
		"handoff-rewind         0/3   0      \n",
		"kill-9           2        2s    4           42       0\n",
		"sigstop          1        2s    0           0        0\n",
		"none             -        -     0           42       0\n",
		"messages: 30 acknowledged, 34 delivered, 4 sends failed",
		"longest orphan: 300ms (seed 5, partition 0)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
