package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

// TestIntegrationThroughputRuns builds the program and runs it with 2,000
// messages and one round against the stack named by ZK_ADDR and
// KAFKA_ADDRS, so it keeps working: every reader must read every message and
// get its row.
func TestIntegrationThroughputRuns(t *testing.T) {
	benchstack.Integration(t)
	bin := benchstack.BuildCommand(t)
	out, err := exec.Command(bin, "-n", "2000", "-rounds", "1", "-timeout", "1m").CombinedOutput()
	if err != nil {
		t.Fatalf("throughput: %v\n%s", err, out)
	}
	for _, name := range readerNames() {
		if !strings.Contains(string(out), "| "+name+" | ") {
			t.Errorf("no row for reader %s in:\n%s", name, out)
		}
	}
	for _, tg := range targets {
		if !strings.Contains(string(out), tg.ours+" / "+tg.theirs+": throughput") {
			t.Errorf("no ratio %s / %s in:\n%s", tg.ours, tg.theirs, out)
		}
	}
}
