package testenv

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Helpers for tests against a ZooKeeper ensemble: the stack started with
// ZK_NODES=3 (see integration/stack.sh). Servers are numbered from 1; the
// brokers use servers 2 and 3 only, so server 1 is the one to cut while it
// is a follower.

// Modes ZKMode reports besides ZooKeeper's own "leader", "follower" and
// "standalone".
const (
	// ModeNotServing: the server runs but serves no client (it has no
	// quorum: it is looking for a leader or syncing with one).
	ModeNotServing = "not-serving"
	// ModeUnreachable: nothing answers on the server's client port.
	ModeUnreachable = "unreachable"
)

// ZKNodes is the number of ZooKeeper servers of the stack: $ZK_NODES,
// default 1.
func ZKNodes() int {
	n, err := strconv.Atoi(getenv("ZK_NODES", "1"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// ZKServers are the client addresses of every ZooKeeper server: ZKAddr
// split at its commas, one "host:port" each, as NewKazoo and
// JoinConsumerGroup take them. (ZKAddr itself is a connection string.)
func ZKServers() []string { return strings.Split(ZKAddr(), ",") }

// ZKServerAddr is the client address of server i (from 1): the i-th entry
// of ZKServers. It panics when the stack has no server i.
func ZKServerAddr(i int) string {
	addrs := ZKServers()
	if i < 1 || i > len(addrs) {
		panic(fmt.Sprintf("testenv: no ZooKeeper server %d in ZK_ADDR=%q", i, ZKAddr()))
	}
	return addrs[i-1]
}

// Ensemble skips t unless the stack runs a ZooKeeper ensemble of three
// (ZK_NODES=3), and under -short.
func Ensemble(t testing.TB) {
	t.Helper()
	Integration(t)
	if ZKNodes() != 3 || len(ZKServers()) != 3 {
		t.Skip("needs a ZooKeeper ensemble: start the stack with ZK_NODES=3 and pass its `env` (ZK_NODES=3, ZK_ADDR with three servers)")
	}
}

// ZKMode asks server i for its mode with the four-letter command srvr:
// "leader", "follower", "standalone", ModeNotServing or ModeUnreachable.
func ZKMode(i int) string {
	out, err := fourLetter(ZKServerAddr(i), "srvr")
	if err != nil {
		return ModeUnreachable
	}
	for line := range strings.Lines(out) {
		if mode, ok := strings.CutPrefix(strings.TrimSpace(line), "Mode: "); ok {
			return mode
		}
	}
	return ModeNotServing
}

// fourLetter sends a four-letter command and returns the whole answer.
func fourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// EnsembleLeader returns the id of the server that leads the ensemble,
// waiting up to 30 s until exactly one server reports Mode leader.
func EnsembleLeader(t testing.TB) int {
	t.Helper()
	return WaitLeader(t, 30*time.Second, 0)
}

// WaitLeader waits up to timeout until exactly one server other than
// `not` (0: any) leads, and returns its id.
func WaitLeader(t testing.TB, timeout time.Duration, not int) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		leaders, modes := []int{}, []string{}
		for i := 1; i <= ZKNodes(); i++ {
			m := ZKMode(i)
			modes = append(modes, fmt.Sprintf("%d:%s", i, m))
			if m == "leader" {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) == 1 && leaders[0] != not {
			return leaders[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no single leader (other than %d) after %v: %s", not, timeout, strings.Join(modes, " "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitZKMode waits up to timeout until server i reports mode, and returns
// how long that took.
func WaitZKMode(t testing.TB, i int, mode string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		m := ZKMode(i)
		if m == mode {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("ZooKeeper server %d: mode %s after %v, want %s", i, m, timeout, mode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CutZK cuts server i off from its peers without telling anyone: its peer
// connections stay up but carry nothing, as in a network partition, so the
// servers notice only through their own timeouts. Its clients stay
// connected to it until it gives up on the leader (syncLimit ticks).
func CutZK(t testing.TB, i int) { t.Helper(); Stack(t, "cut-zk", strconv.Itoa(i), "silent") }

// CutZKReset cuts server i off from its peers by closing every peer
// connection (and refusing new ones), so that both sides notice at once.
func CutZKReset(t testing.TB, i int) { t.Helper(); Stack(t, "cut-zk", strconv.Itoa(i), "reset") }

// HealZK reconnects server i to its peers.
func HealZK(t testing.TB, i int) { t.Helper(); Stack(t, "heal-zk", strconv.Itoa(i)) }

// KillZK kills server i with SIGKILL.
func KillZK(t testing.TB, i int) { t.Helper(); Stack(t, "kill-zk", strconv.Itoa(i)) }

// StopZK stops server i with SIGTERM.
func StopZK(t testing.TB, i int) { t.Helper(); Stack(t, "stop-zk", strconv.Itoa(i)) }

// StartZK starts server i (if it does not run) and waits until it serves as
// leader or follower.
func StartZK(t testing.TB, i int) { t.Helper(); Stack(t, "start-zk", strconv.Itoa(i)) }

// Stack runs integration/stack.sh with args, failing t if it fails, and
// returns its standard output. The stack's settings (STACK_DIR, ZK_PORT,
// ZK_NODES, ...) come from the environment, which the script inherits.
func Stack(t testing.TB, args ...string) string {
	t.Helper()
	script, err := stackScript()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(script, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stack.sh %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	t.Logf("stack.sh %s took %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// stackScript finds integration/stack.sh in the module that holds the
// working directory (a test runs in its package's folder).
func stackScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "integration", "stack.sh"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod above the working directory; cannot find integration/stack.sh")
		}
		dir = parent
	}
}
