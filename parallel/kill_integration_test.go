package parallel_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/parallel"
)

// The environment of the child process of TestIntegrationParallelKill.
const (
	killChildEnv = "PARALLEL_KILL_CHILD" // the file it writes its runs and marks to
	killGroupEnv = "PARALLEL_KILL_GROUP"
	killTopicEnv = "PARALLEL_KILL_TOPIC"
)

// killMaxInFlight is the child's Config.MaxInFlight.
const killMaxInFlight = 8

// TestIntegrationParallelKill: a member running parallel is killed with
// SIGKILL mid-run (a child process) and another takes over: 0 messages
// lost, 0 per-key order violations, and per partition the messages
// processed twice that the killed member had not marked are at most
// MaxInFlight. The others processed twice were marked but not yet
// committed (the group commits every Offsets.CommitInterval); they are
// counted apart.
func TestIntegrationParallelKill(t *testing.T) {
	testenv.Integration(t)
	const n, keys = 6000, 200
	topic := testenv.UniqueName("parallel-kill")
	testenv.CreateTopic(t, topic, 4)
	want := produceKeyed(t, topic, n, keys)
	group := testenv.UniqueName("parallel-kill")
	out := t.TempDir() + "/child.log"

	cmd := exec.Command(os.Args[0], "-test.run=^TestIntegrationParallelKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+out, killGroupEnv+"="+group, killTopicEnv+"="+topic)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the child processed a quarter", func() bool {
		child := readChildLog(t, out)
		return len(child.finished) >= n/4
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	child := readChildLog(t, out)

	l := newLedger()
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, groupConfig())
	if err != nil {
		t.Fatal(err)
	}
	stop := consumeLoop(t, g, topic, parallel.NewHandler(l.fn(1, 5*time.Millisecond), parallel.Config{}), nil)
	defer stop()
	covered := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		c := len(l.done)
		for po := range child.finished {
			if !l.done[po] {
				c++
			}
		}
		return c
	}
	waitUntil(t, 120*time.Second, "every message processed by one member or the other", func() bool { return covered() >= n })
	stop()

	l.mu.Lock()
	defer l.mu.Unlock()
	lost := 0
	for p, offs := range want {
		for o := range offs {
			po := [2]int64{int64(p), o}
			if !l.done[po] && !child.finished[po] {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
	}
	// Duplicates, per partition: above the child's last mark (parallel's
	// window) and at or below it (marked, not yet committed).
	for p := range want {
		unmarked, uncommitted := 0, 0
		for po := range child.finished {
			if po[0] != int64(p) || !l.done[po] {
				continue
			}
			if po[1] > child.lastMark[p] {
				unmarked++
			} else {
				uncommitted++
			}
		}
		t.Logf("partition %d: child finished %d, last marked %d; processed again: %d not marked (bound %d), %d marked but not committed",
			p, child.count(p), child.lastMark[p], unmarked, killMaxInFlight, uncommitted)
		if unmarked > killMaxInFlight {
			t.Errorf("partition %d: %d messages finished but not marked were processed again, more than MaxInFlight (%d)", p, unmarked, killMaxInFlight)
		}
	}
	// Per-key order across the crash: the survivor never starts a key's
	// message before every earlier one of the key was processed by one
	// or the other; the child's runs are in order among themselves.
	violations := child.violations()
	firstHole := map[string]int{} // per key, the lowest seq the child did not finish
	seqsByKey := map[string][]int{}
	for p, offs := range want {
		for o, m := range offs {
			if !child.finished[[2]int64{int64(p), o}] {
				seqsByKey[m.key] = append(seqsByKey[m.key], m.seq)
			}
		}
	}
	for k, s := range seqsByKey {
		sort.Ints(s)
		firstHole[k] = s[0]
	}
	runs := append([]run(nil), l.runs...)
	sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
	next := firstHole
	for _, r := range runs {
		if h, ok := next[r.key]; ok && r.seq > h {
			violations++
		}
		if h, ok := next[r.key]; ok && r.seq == h {
			next[r.key] = h + 1
			// Skip the seqs the child finished.
			for child.finishedSeq[r.key][next[r.key]] {
				next[r.key]++
			}
		}
	}
	t.Logf("child finished %d, survivor ran %d, %d lost, %d per-key order violations", len(child.finished), len(l.runs), lost, violations)
	if violations > 0 {
		t.Errorf("%d per-key order violations", violations)
	}
}

// childLog is what the killed child wrote: the messages it finished and
// its last mark per partition.
type childLog struct {
	finished    map[[2]int64]bool
	finishedSeq map[string]map[int]bool
	starts      map[string][][2]int64 // per key: start ns, seq
	lastMark    map[int32]int64
}

func (c *childLog) count(p int32) int {
	n := 0
	for po := range c.finished {
		if po[0] == int64(p) {
			n++
		}
	}
	return n
}

// violations counts, per key, child runs that started before an earlier
// seq of the key had started.
func (c *childLog) violations() int {
	v := 0
	for _, s := range c.starts {
		sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
		for i := 1; i < len(s); i++ {
			if s[i][1] != s[i-1][1]+1 {
				v++
			}
		}
	}
	return v
}

// readChildLog parses the child's lines, "F partition offset key seq
// startNanos" and "M partition offset"; a torn last line is ignored.
func readChildLog(t *testing.T, path string) *childLog {
	c := &childLog{finished: map[[2]int64]bool{}, finishedSeq: map[string]map[int]bool{}, starts: map[string][][2]int64{}, lastMark: map[int32]int64{}}
	for p := range int32(4) {
		c.lastMark[p] = -1
	}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		p, _ := strconv.Atoi(fs[1])
		o, _ := strconv.ParseInt(fs[2], 10, 64)
		switch {
		case fs[0] == "F" && len(fs) == 6:
			seq, _ := strconv.Atoi(fs[4])
			start, _ := strconv.ParseInt(fs[5], 10, 64)
			c.finished[[2]int64{int64(p), o}] = true
			if c.finishedSeq[fs[3]] == nil {
				c.finishedSeq[fs[3]] = map[int]bool{}
			}
			c.finishedSeq[fs[3]][seq] = true
			c.starts[fs[3]] = append(c.starts[fs[3]], [2]int64{start, int64(seq)})
		case fs[0] == "M":
			c.lastMark[int32(p)] = max(c.lastMark[int32(p)], o)
		}
	}
	return c
}

// TestIntegrationParallelKillChild is the child process of
// TestIntegrationParallelKill, run only with its environment: a member
// running parallel that writes each message it finishes and each mark to
// a file, until it is killed.
func TestIntegrationParallelKillChild(t *testing.T) {
	out := os.Getenv(killChildEnv)
	if out == "" {
		t.Skip("the child process of TestIntegrationParallelKill; runs only from it")
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	write := func(line string) { // one write(2) per line: survives the kill
		mu.Lock()
		defer mu.Unlock()
		_, _ = f.WriteString(line + "\n")
	}
	fn := func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		start := time.Now()
		time.Sleep(time.Duration(start.UnixNano() % int64(10*time.Millisecond)))
		key, seq, _ := strings.Cut(string(msg.Value), ":")
		write(fmt.Sprintf("F %d %d %s %s %d", msg.Partition, msg.Offset, key, seq, start.UnixNano()))
		return nil
	}
	cfg := groupConfig()
	cfg.Zookeeper.Timeout = 4 * time.Second // the survivor claims once this session expires
	g, err := consumergroup.NewConsumerGroup(os.Getenv(killGroupEnv), []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := markWriter{parallel.NewHandler(fn, parallel.Config{MaxInFlight: killMaxInFlight}), write}
	for {
		_ = g.Consume(context.Background(), []string{os.Getenv(killTopicEnv)}, h)
	}
}

// markWriter runs a handler with a session that writes each mark.
type markWriter struct {
	sarama.ConsumerGroupHandler
	write func(string)
}

func (h markWriter) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	return h.ConsumerGroupHandler.ConsumeClaim(markWritingSession{s, h.write}, c)
}

// markWritingSession writes "M partition offset" before each mark.
type markWritingSession struct {
	sarama.ConsumerGroupSession
	write func(string)
}

func (s markWritingSession) MarkMessage(msg *sarama.ConsumerMessage, metadata string) {
	s.write(fmt.Sprintf("M %d %d", msg.Partition, msg.Offset))
	s.ConsumerGroupSession.MarkMessage(msg, metadata)
}
