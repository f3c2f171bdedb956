package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrationCampaignShort builds the command and runs a few short
// seeds (CAMPAIGN_SEEDS) of 15 s with every fault kind against the
// ensemble-and-three-brokers stack the environment describes; each must
// check clean. The default seeds, 12, 25 and 29, draw between them every
// kind but sigstop (a pause longer than the session can let a message
// through twice, docs/campaign.md): leave, follower cut, offset reset,
// client cut, kill -9, leader kill, join, broker restart. It needs ZKGROUP_CAMPAIGN=1 and that stack:
// integration/campaign-tests.sh starts one and runs it.
func TestIntegrationCampaignShort(t *testing.T) {
	if os.Getenv("ZKGROUP_CAMPAIGN") == "" || os.Getenv("ZK_ADDR") == "" {
		t.Skip("set ZKGROUP_CAMPAIGN=1 and ZK_ADDR, KAFKA_ADDRS of a stack with 3 ZooKeeper servers and 3 brokers (integration/campaign-tests.sh)")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "campaign")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script, err := filepath.Abs("../../stack.sh")
	if err != nil {
		t.Fatal(err)
	}
	seeds := os.Getenv("CAMPAIGN_SEEDS")
	if seeds == "" {
		seeds = "12,25,29"
	}
	for _, seed := range strings.Split(seeds, ",") {
		t.Run("seed "+seed, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			cmd := exec.Command(bin, "-seed", seed, "-duration", "15s", "-stack", script, "-out", out,
				"-faults", "kill-9,sigstop,client-zk-cut,zk-follower-cut,zk-leader-kill,broker-restart,join,leave,offset-reset")
			report, err := cmd.CombinedOutput()
			t.Logf("%s", report)
			if err != nil {
				t.Errorf("seed %s: %v (histories in %s)", seed, err, out)
			}
			if !strings.Contains(string(report), "lost-write") {
				t.Errorf("seed %s: no table in the output", seed)
			}
		})
	}
}
