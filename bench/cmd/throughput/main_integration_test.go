package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrationThroughputRuns builds the program and runs it with 2,000
// messages and one round against the stack named by KAFKA_ADDRS and
// ZK_ADDR, so it keeps working: every reader must read every message and
// get its row.
func TestIntegrationThroughputRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped under -short")
	}
	if os.Getenv("KAFKA_ADDRS") == "" {
		t.Skip("integration test: KAFKA_ADDRS is not set (eval \"$(integration/stack.sh env)\")")
	}
	bin := filepath.Join(t.TempDir(), "throughput")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
