package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

// TestIntegrationRollingScaledDown builds the program and runs a small
// rolling deploy (3 instances, 12 partitions, away 1 s) of ours, static
// and dynamic, against the stack named by ZK_ADDR and KAFKA_ADDRS. It
// checks correctness only, never speed: no acknowledged message lost, and
// no partition of the static group delivered by another instance than
// its own.
func TestIntegrationRollingScaledDown(t *testing.T) {
	benchstack.Integration(t)
	bin := benchstack.BuildCommand(t)
	js := filepath.Join(t.TempDir(), "out.json")
	out, err := exec.Command(bin, "-instances", "3", "-partitions", "12", "-away", "1s", "-warm", "1s",
		"-groups", "ours-static,ours-dynamic", "-out", js).CombinedOutput()
	if err != nil {
		t.Fatalf("rolling: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows, want 2: %s", len(rep.Rows), b)
	}
	for _, r := range rep.Rows {
		if r.Acked == 0 {
			t.Errorf("%s: nothing acknowledged", r.Group)
		}
		if r.Lost != 0 {
			t.Errorf("%s: %d acknowledged messages never delivered", r.Group, r.Lost)
		}
		if r.Group == "ours-static" && r.Moved != 0 {
			t.Errorf("ours-static: %d partitions delivered by another instance than their own", r.Moved)
		}
	}
}
