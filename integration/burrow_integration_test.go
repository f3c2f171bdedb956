package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationBurrow runs Burrow, the usual lag monitor for offsets kept
// in ZooKeeper, against the stack, on a group with partitions that were
// never marked (nothing was produced to them while it consumed). Burrow's
// ZooKeeper module reads the offset nodes of partitions 0..n-1, n being how
// many nodes it finds, so a missing node hides its partition and, behind a
// gap, others. Every partition must be listed by Burrow's lag endpoint with
// the committed offset and the lag examples/offsets reports.
//
// Skipped when Burrow is not installed (Debian: apt-get install burrow).
func TestIntegrationBurrow(t *testing.T) {
	testenv.Integration(t)
	bin := burrowBinary()
	if bin == "" {
		t.Skip("Burrow is not installed (no Burrow or burrow in PATH; on Debian: apt-get install burrow)")
	}
	const partitions = 4
	topic := newTopic(t, partitions)
	produceTo(t, topic, map[int32]int{0: 7, 2: 3}) // 1 and 3 stay empty while the group consumes
	group := testenv.UniqueName("burrow")

	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	cg := join(t, group, []string{topic}, nil)
	l := newLedger()
	done := consume(t, 0, cg, l)
	waitFor(t, 20*time.Second, "every message delivered", func() bool { return l.distinct() == 10 })
	waitOffsets(t, kz, group, topic, partitions, map[int32]int64{0: 7, 1: 0, 2: 3, 3: 0}, 10*time.Second)
	closeGroup(t, cg)
	<-done
	// Lag on the partitions never consumed.
	produceTo(t, topic, map[int32]int{1: 5, 3: 2})

	want := offsetsReport(t, group)
	if len(want) != partitions {
		t.Fatalf("examples/offsets reports %d partitions, want %d: %+v", len(want), partitions, want)
	}

	b := startBurrow(t, bin, group)
	var last string
	deadline := time.Now().Add(40 * time.Second)
	for {
		got, raw, err := b.lag(group)
		last = raw
		mismatch := compareBurrow(topic, got, want)
		if err == nil && mismatch == "" {
			t.Logf("Burrow lists all %d partitions: %s", partitions, summarize(got))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Burrow's lag for %s does not match examples/offsets (%v%s)\nBurrow: %s\nexamples/offsets: %+v\nBurrow's log:\n%s",
				group, err, mismatch, last, want, b.logTail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func burrowBinary() string {
	for _, name := range []string{"Burrow", "burrow"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// offsetRow is one partition of examples/offsets -json.
type offsetRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed *int64 `json:"committed"`
	Lag       *int64 `json:"lag"`
}

// offsetsReport runs examples/offsets for group and returns its partitions
// by partition id.
func offsetsReport(t *testing.T, group string) map[int32]offsetRow {
	t.Helper()
	cmd := exec.Command("go", "run", "./examples/offsets", "-zookeeper", testenv.ZKAddr(), "-group", group, "-json")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("examples/offsets: %v\n%s", err, stderr.String())
	}
	var reports []struct {
		Partitions []offsetRow `json:"partitions"`
	}
	if err := json.Unmarshal(out, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("examples/offsets output %s: %v", out, err)
	}
	rows := make(map[int32]offsetRow)
	for _, r := range reports[0].Partitions {
		if r.Committed == nil || r.Lag == nil {
			t.Fatalf("examples/offsets: partition %d without a committed offset or lag: %s", r.Partition, out)
		}
		rows[r.Partition] = r
	}
	return rows
}

// burrowPartition is one partition of Burrow's lag endpoint.
type burrowPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	End       *struct {
		Offset int64 `json:"offset"`
	} `json:"end"`
	CurrentLag int64 `json:"current_lag"`
}

func compareBurrow(topic string, got []burrowPartition, want map[int32]offsetRow) string {
	seen := make(map[int32]bool)
	var diffs []string
	for _, p := range got {
		if p.Topic != topic {
			continue
		}
		seen[p.Partition] = true
		w, ok := want[p.Partition]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("partition %d unknown to examples/offsets", p.Partition))
		case p.End == nil:
			diffs = append(diffs, fmt.Sprintf("partition %d without an offset", p.Partition))
		case p.End.Offset != *w.Committed || p.CurrentLag != *w.Lag:
			diffs = append(diffs, fmt.Sprintf("partition %d: offset %d lag %d, want %d lag %d",
				p.Partition, p.End.Offset, p.CurrentLag, *w.Committed, *w.Lag))
		}
	}
	for p := range want {
		if !seen[p] {
			diffs = append(diffs, fmt.Sprintf("partition %d not listed", p))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "; " + strings.Join(diffs, "; ")
}

func summarize(ps []burrowPartition) string {
	var parts []string
	for _, p := range ps {
		if p.End != nil {
			parts = append(parts, fmt.Sprintf("%d: offset %d lag %d", p.Partition, p.End.Offset, p.CurrentLag))
		}
	}
	return strings.Join(parts, ", ")
}

// burrow is a running Burrow process.
type burrow struct {
	dir  string
	addr string
}

// startBurrow writes a configuration for the stack into a temporary
// directory and runs Burrow with it until the test ends: its ZooKeeper
// offsets module (kafka_zk) for the group, the cluster's broker offsets
// refreshed every second, and its HTTP server on a free loopback port.
// Storage has one worker, so the broker offsets read at start are stored
// before the first consumer offset (Burrow drops consumer offsets of
// partitions whose broker offset it does not know yet).
func startBurrow(t *testing.T, bin, group string) *burrow {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	quote := func(list []string) string {
		q := make([]string, len(list))
		for i, s := range list {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	servers, chroot := kazoo.ParseConnectionString(testenv.ZKAddr())
	conf := fmt.Sprintf(`[general]
pidfile=%q

[logging]
filename=%q
level="debug"

[zookeeper]
servers=%s
timeout=6
root-path=%q

[client-profile.it]
client-id="burrow-it"
kafka-version="2.0.0"

[cluster.it]
class-name="kafka"
servers=%s
client-profile="it"
topic-refresh=1
offset-refresh=1

[consumer.zk]
class-name="kafka_zk"
cluster="it"
servers=%s
zookeeper-path=%q
zookeeper-timeout=6
group-whitelist=%q

[httpserver.default]
address=%q

[storage.default]
class-name="inmemory"
workers=1
intervals=10
expire-group=604800
min-distance=1

[evaluator.default]
class-name="caching"
expire-cache=1
`, filepath.Join(dir, "burrow.pid"), filepath.Join(dir, "burrow.log"), quote(servers), chroot+"/burrow-integration",
		quote(testenv.KafkaAddrs()), quote(servers), chroot, "^"+regexp.QuoteMeta(group)+"$", addr)
	if err := os.WriteFile(filepath.Join(dir, "burrow.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-dir", dir)
	cmd.Dir = dir
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = out.Close()
	})
	b := &burrow{dir: dir, addr: addr}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/burrow/admin")
		if err == nil {
			_ = resp.Body.Close()
			return b
		}
		select {
		case err := <-exited:
			t.Fatalf("Burrow exited: %v\n%s", err, b.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Burrow's HTTP server did not answer at %s: %v\n%s", addr, err, b.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lag returns the partitions of Burrow's lag endpoint for group, and the
// raw response.
func (b *burrow) lag(group string) ([]burrowPartition, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.addr+"/v3/kafka/it/consumer/"+group+"/lag", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	var r struct {
		Error   bool   `json:"error"`
		Message string `json:"message"`
		Status  struct {
			Partitions []burrowPartition `json:"partitions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, string(body), fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if r.Error || resp.StatusCode != http.StatusOK {
		return nil, string(body), fmt.Errorf("HTTP %d: %s", resp.StatusCode, r.Message)
	}
	return r.Status.Partitions, string(body), nil
}

// logTail returns the end of Burrow's logs, for failure messages.
func (b *burrow) logTail() string {
	var sb strings.Builder
	for _, name := range []string{"stdout.log", "burrow.log"} {
		data, _ := os.ReadFile(filepath.Join(b.dir, name))
		if len(data) > 6000 {
			data = data[len(data)-6000:]
		}
		fmt.Fprintf(&sb, "--- %s\n%s\n", name, data)
	}
	return sb.String()
}
