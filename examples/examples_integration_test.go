package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

const partitions = 4

// TestIntegrationExamples builds the example programs and runs them against
// the local stack on a fresh topic: the group consumer reads what was
// produced and commits it, the offsets tool reports those commits, the
// owners of a running member and the lag, the console consumer prints the
// messages, and SIGTERM stops a member cleanly.
func TestIntegrationExamples(t *testing.T) {
	testenv.Integration(t)
	bin := buildExamples(t)
	zk := testenv.ZKAddr()
	topic := newTopic(t)

	const n = 8
	counts := produce(t, topic, n)

	group := testenv.UniqueName("examples")
	deleteGroupAfter(t, group)
	t.Run("consumergroup", func(t *testing.T) {
		out := runOK(t, bin, "consumergroup", "-zookeeper", zk, "-group", group, "-topics", topic, "-max", fmt.Sprint(n), "-timeout", "90s")
		for i := range n {
			if !strings.Contains(out, fmt.Sprintf("value=%q", value(i))) {
				t.Errorf("output lacks message %d:\n%s", i, out)
			}
		}
		if !strings.Contains(out, fmt.Sprintf("processed %d messages", n)) {
			t.Errorf("output lacks the summary:\n%s", out)
		}
	})

	t.Run("offsets", func(t *testing.T) {
		table := runOK(t, bin, "offsets", "-zookeeper", zk, "-group", group)
		for p := range int32(partitions) {
			// GROUP TOPIC PARTITION COMMITTED NEWEST LAG OWNER
			want := []string{group, topic, fmt.Sprint(p), fmt.Sprint(counts[p]), fmt.Sprint(counts[p]), "0", "-"}
			if !hasRow(table, want) {
				t.Errorf("table lacks row %q:\n%s", want, table)
			}
		}
		rows := offsetsJSON(t, bin, zk, group)
		for p := range int32(partitions) {
			r, ok := rows[p]
			if !ok || r.Committed == nil || *r.Committed != counts[p] || r.Lag == nil || *r.Lag != 0 {
				t.Errorf("partition %d: got %+v, want committed %d and lag 0", p, r, counts[p])
			}
		}
	})

	t.Run("producer and lag", func(t *testing.T) {
		out := runOK(t, bin, "producer", "-zookeeper", zk, "-topic", topic, "-n", fmt.Sprint(partitions))
		if got := strings.Count(out, topic+"/"); got != partitions {
			t.Fatalf("producer printed %d placements, want %d:\n%s", got, partitions, out)
		}
		var lag int64
		for _, r := range offsetsJSON(t, bin, zk, group) {
			if r.Lag != nil {
				lag += *r.Lag
			}
		}
		if lag != partitions {
			t.Errorf("total lag after producing %d more messages = %d", partitions, lag)
		}
	})

	t.Run("consoleconsumer", func(t *testing.T) {
		out := runOK(t, bin, "consoleconsumer", "-zookeeper", zk, "-topics", topic, "-offset", "oldest", "-max", fmt.Sprint(n+partitions), "-timeout", "90s")
		for i := range n {
			if !strings.Contains(out, value(i)+"\n") {
				t.Errorf("output lacks message %d:\n%s", i, out)
			}
		}
		if lines := strings.Count(out, "\n"); lines != n+partitions {
			t.Errorf("printed %d lines, want %d:\n%s", lines, n+partitions, out)
		}
	})

	t.Run("owners and SIGTERM", func(t *testing.T) {
		member := testenv.UniqueName("examples-member")
		deleteGroupAfter(t, member)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var stdout, stderr lockedBuffer
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "consumergroup"), "-zookeeper", zk, "-group", member, "-topics", topic)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()

		// Wait until the member owns every partition and has printed every
		// message, so that SIGTERM finds nothing left to deliver.
		deadline := time.Now().Add(60 * time.Second)
		for {
			rows, err := tryOffsetsJSON(bin, zk, member) // fails until the member has created its group
			owned := 0
			for _, r := range rows {
				if r.Owner != "" {
					owned++
				}
			}
			printed := strings.Count(stdout.String(), " offset=")
			if owned == partitions && printed == n+partitions {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("member exited early (%v):\n%s\n%s", err, stdout.String(), stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 60s the member owns %d of %d partitions and printed %d of %d messages: %+v (%v)\n%s",
					owned, partitions, printed, n+partitions, rows, err, stderr.String())
			}
			time.Sleep(200 * time.Millisecond)
		}

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("member exited with %v after SIGTERM:\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("member still running 30s after SIGTERM:\n%s", stderr.String())
		}
		if !strings.Contains(stdout.String(), fmt.Sprintf("processed %d messages", n+partitions)) {
			t.Errorf("summary missing or wrong:\n%s", stdout.String())
		}
		for p, r := range offsetsJSON(t, bin, zk, member) {
			if r.Owner != "" {
				t.Errorf("partition %d still owned by %s after the member stopped", p, r.Owner)
			}
			if r.Committed == nil || r.Lag == nil || *r.Lag != 0 {
				t.Errorf("partition %d after the member stopped: %+v, want everything committed", p, r)
			}
		}
	})
}

// TestIntegrationDemo runs the demo for 30 seconds in plain mode, as `make
// demo` would for 60, and checks its story and its verdict: member 2 is
// fenced after being cut off from ZooKeeper, its partitions move to the
// others, it gets partitions back once it can reach ZooKeeper again, no
// message is lost and every partition is consumed.
func TestIntegrationDemo(t *testing.T) {
	testenv.Integration(t)
	bin := buildExamples(t)
	out := runOK(t, bin, "demo", "-plain", "-duration", "30s", "-zookeeper", testenv.ZKAddr())

	// The story, in this order.
	at := 0
	for _, step := range []string{
		"member 2 CUT OFF from ZooKeeper",
		"member 2 FENCED",
		"member 2 no longer owns partitions",
		"member 2 can reach ZooKeeper again",
		"member 2 claimed partitions",
		"members closed",
	} {
		i := strings.Index(out[at:], step)
		if i < 0 {
			t.Fatalf("the demo's output lacks %q after offset %d:\n%s", step, at, out)
		}
		at += i + len(step)
	}

	m := regexp.MustCompile(`(?m)^summary: produced=(\d+) consumed=(\d+) lost=(\d+) twice=\d+ partitions=(\d+)/(\d+) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line:\n%s", out)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	if produced, consumed, lost, parts, of := n[1], n[2], n[3], n[4], n[5]; produced < 1000 || consumed != produced || lost != 0 || of != 16 || parts != of {
		t.Errorf("summary %q: want over 1000 produced, all consumed, 0 lost, 16/16 partitions\n%s", m[0], out)
	}
}

// lockedBuffer is a bytes.Buffer that a running command may write while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// deleteGroupAfter removes the consumer group from ZooKeeper when the test
// ends, so that runs do not pile up groups on the shared stack.
func deleteGroupAfter(t *testing.T, name string) {
	t.Cleanup(func() {
		kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
		if err != nil {
			t.Logf("delete group %s: %v", name, err)
			return
		}
		defer kz.Close()
		if err := kz.Consumergroup(name).Delete(); err != nil {
			t.Logf("delete group %s: %v", name, err)
		}
	})
}

// buildExamples builds every example program into a temporary directory and
// returns it.
func buildExamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./consumergroup", "./consoleconsumer", "./offsets", "./producer", "./demo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// runOK runs an example program to completion and returns its standard
// output; it fails the test if the program fails.
func runOK(t *testing.T, bin, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

type partitionRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed *int64 `json:"committed"`
	Newest    *int64 `json:"newest"`
	Lag       *int64 `json:"lag"`
	Owner     string `json:"owner"`
	Error     string `json:"error"`
}

// offsetsJSON runs the offsets program with -json for one group and returns
// its rows by partition.
func offsetsJSON(t *testing.T, bin, zk, group string) map[int32]partitionRow {
	t.Helper()
	rows, err := tryOffsetsJSON(bin, zk, group)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// tryOffsetsJSON is offsetsJSON returning its failure.
func tryOffsetsJSON(bin, zk, group string) (map[int32]partitionRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "offsets"), "-zookeeper", zk, "-group", group, "-json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("offsets -group %s -json: %w\n%s", group, err, stderr.String())
	}
	var groups []struct {
		Group      string         `json:"group"`
		Partitions []partitionRow `json:"partitions"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &groups); err != nil {
		return nil, fmt.Errorf("offsets -json: %w\n%s", err, stdout.String())
	}
	if len(groups) != 1 || groups[0].Group != group {
		return nil, fmt.Errorf("offsets -json: want exactly group %s, got:\n%s", group, stdout.String())
	}
	rows := make(map[int32]partitionRow)
	for _, r := range groups[0].Partitions {
		rows[r.Partition] = r
	}
	return rows, nil
}

// hasRow reports whether some line of a tab-aligned table starts with the
// given cells.
func hasRow(table string, cells []string) bool {
	for line := range strings.Lines(table) {
		fields := strings.Fields(line)
		if len(fields) >= len(cells) && strings.Join(fields[:len(cells)], " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

func value(i int) string { return fmt.Sprintf("example message %d", i) }

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	return cfg
}

// newTopic creates a topic with a unique name, waits until each partition
// has a leader, and deletes it when the test ends.
func newTopic(t *testing.T) string {
	t.Helper()
	name := testenv.UniqueName("examples")
	testenv.CreateTopic(t, name, partitions)
	return name
}

// produce writes n messages round-robin and returns how many went to each
// partition.
func produce(t *testing.T, topic string, n int) map[int32]int64 {
	t.Helper()
	producer, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer producer.Close()
	counts := make(map[int32]int64)
	for i := range n {
		p, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(value(i))})
		if err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
		counts[p]++
	}
	return counts
}
