package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/offsets"
)

// Every command that connects takes the shared security flags, and the
// ones that read or write offsets take -storage.
func TestSecurityAndStorageFlags(t *testing.T) {
	for _, cmd := range []string{"show", "export", "import", "reset", "transfer", "list", "delete"} {
		var out, errOut bytes.Buffer
		if code := run([]string{cmd, "-h"}, &out, &errOut); code != 0 {
			t.Fatalf("%s -h: exit %d: %s", cmd, code, errOut.String())
		}
		for _, f := range []string{"-zk-tls-ca", "-zk-user", "-zk-password-file", "-kafka-tls-ca", "-sasl-user", "-sasl-mechanism", "-listener"} {
			if !strings.Contains(errOut.String(), f) {
				t.Errorf("%s -h lacks %s", cmd, f)
			}
		}
		hasStorage := strings.Contains(errOut.String(), "-storage")
		if wants := cmd != "transfer" && cmd != "list"; hasStorage != wants {
			t.Errorf("%s -h lists -storage: %v, want %v", cmd, hasStorage, wants)
		}
	}
}

func TestParseStorage(t *testing.T) {
	for s, want := range map[string]offsets.Kind{"zookeeper": offsets.KindZookeeper, "kafka": offsets.KindKafka, "dual": offsets.KindDual} {
		if got, err := parseStorage(s); err != nil || got != want {
			t.Errorf("parseStorage(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := parseStorage("zk"); err == nil {
		t.Error("parseStorage(zk) accepted")
	}
}

// The command's help lists the target forms and the exit codes.
func TestHelpListsTargetsAndExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-h"}, &out, &errOut); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, want := range []string{"earliest", "latest", "shift N", "to N", "RFC 3339", "-by-duration", "exit status", "0 ", "1 ", "2 ", "list", "delete", "-storage"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("-h lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestByDurationTarget(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tgt, err := durationTarget("1h30m", now)
	if err != nil || tgt.kind != targetTime || !tgt.at.Equal(now.Add(-90*time.Minute)) {
		t.Fatalf("durationTarget = %+v, %v", tgt, err)
	}
	for _, bad := range []string{"", "x", "-1h", "0s"} {
		if _, err := durationTarget(bad, now); err == nil {
			t.Errorf("durationTarget(%q) accepted", bad)
		}
	}
}

// Storage warnings: the store not in use, ahead of the one in use, is
// named; under dual, any difference is, since the higher one wins.
func TestAheadWarnings(t *testing.T) {
	zk := map[string]map[int32]int64{"t": {0: 10, 1: 5}}
	kafka := map[string]map[int32]int64{"t": {0: 8, 1: 7}}
	w := aheadWarnings(offsets.KindZookeeper, zk, kafka)
	if len(w) != 1 || !strings.Contains(w[0], "t/1") || !strings.Contains(w[0], "Kafka holds 7") {
		t.Errorf("zookeeper warnings = %q", w)
	}
	w = aheadWarnings(offsets.KindKafka, zk, kafka)
	if len(w) != 1 || !strings.Contains(w[0], "t/0") || !strings.Contains(w[0], "ZooKeeper holds 10") {
		t.Errorf("kafka warnings = %q", w)
	}
	if w = aheadWarnings(offsets.KindDual, zk, kafka); len(w) != 2 {
		t.Errorf("dual warnings = %q", w)
	}
}

// -json prints the plan as one JSON document.
func TestPlanJSON(t *testing.T) {
	var out bytes.Buffer
	five := int64(5)
	p := planner{out: &out, notes: &bytes.Buffer{}, json: true}
	err := p.print(planDoc{Group: "g", Storage: "kafka", Changes: []change{{Topic: "t", Partition: 1, Before: &five, After: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `"changes": [`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), `"before": 5`) || !strings.Contains(out.String(), `"after": 2`) {
		t.Errorf("plan JSON = %s", out.String())
	}
}

func TestUsageErrorsNewFlags(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "-group", "g", "-storage", "zk"}, 2, "-storage"},
		{[]string{"reset", "-group", "g", "-topic", "t", "-by-duration", "1h", "latest"}, 2, "-by-duration or a TARGET"},
		{[]string{"reset", "-group", "g", "-topic", "t", "-by-duration", "soon"}, 2, "-by-duration"},
		{[]string{"delete"}, 2, "-group is required"},
		{[]string{"show", "-group", "g", "-zookeeper", "127.0.0.1:1", "-zk-user", "u"}, 1, "-zk-password-file"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(c.args, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", c.args, code, errOut.String(), c.code, c.want)
		}
	}
}
