package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// The ensemble's timing, as integration/stack.sh configures it.
const (
	ensembleTick      = 500 * time.Millisecond
	ensembleSyncLimit = 10
)

// TestIntegrationEnsembleStack checks the ensemble stack itself, which the
// ensemble fault tests rely on: a follower cut off from its peers keeps
// serving its clients until it has heard nothing from the leader for
// syncLimit ticks, then drops them, while the other two keep a quorum that
// accepts writes; healed, it rejoins and serves what was written meanwhile;
// and a killed leader is replaced.
func TestIntegrationEnsembleStack(t *testing.T) {
	testenv.Ensemble(t)
	t.Cleanup(func() { restoreEnsemble(t) })
	makeFollower(t, 1)

	group := testenv.UniqueName("ensemble")
	const topic = "ensemble.check"
	onOne := connectZK(t, testenv.ZKServerAddr(1))
	onTwo := connectZK(t, testenv.ZKServerAddr(2))
	if err := onTwo.Consumergroup(group).CommitOffset(topic, 0, 1); err != nil {
		t.Fatalf("write through server 2: %v", err)
	}
	waitFor(t, 10*time.Second, "server 1 to see the first write", func() bool {
		off, err := onOne.Consumergroup(group).FetchOffset(topic, 0)
		return err == nil && off == 1
	})
	before, _ := onOne.Session()

	// Cut server 1. It does not know yet, so it keeps answering reads.
	start := time.Now()
	testenv.CutZK(t, 1)
	applied := time.Now()
	if _, err := onOne.Consumergroup(group).FetchOffset(topic, 0); err != nil {
		t.Fatalf("server 1 stopped serving reads at once: %v", err)
	}
	dropped := waitSession(t, onOne, kazoo.SessionDisconnected, 15*time.Second)
	limit := ensembleSyncLimit * ensembleTick
	t.Logf("cut follower dropped its clients %v after the cut began (%v after it was in force); syncLimit*tickTime = %v",
		dropped.Sub(start).Round(time.Millisecond), dropped.Sub(applied).Round(time.Millisecond), limit)
	// The follower's clock starts at the last packet it got from the
	// leader, which pings every tick, so it may give up up to a tick
	// before syncLimit ticks after the cut.
	if d := dropped.Sub(start); d < limit-ensembleTick {
		t.Errorf("cut follower dropped its clients after %v, before syncLimit*tickTime (%v) minus a tick", d, limit)
	}
	if d := dropped.Sub(applied); d > limit+2*time.Second {
		t.Errorf("cut follower dropped its clients only after %v; want about syncLimit*tickTime (%v)", d, limit)
	}
	if m := testenv.ZKMode(1); m != testenv.ModeNotServing {
		t.Errorf("cut server 1 reports mode %s, want %s", m, testenv.ModeNotServing)
	}

	// Servers 2 and 3 keep a quorum: a client of server 2 writes.
	if leader := testenv.EnsembleLeader(t); leader == 1 {
		t.Fatalf("the cut server 1 leads")
	}
	if err := onTwo.Consumergroup(group).CommitOffset(topic, 0, 2); err != nil {
		t.Fatalf("write through server 2 while server 1 is cut: %v", err)
	}
	time.Sleep(2 * ensembleTick)
	if m := testenv.ZKMode(1); m != testenv.ModeNotServing {
		t.Errorf("cut server 1 reports mode %s a second after the write, want %s", m, testenv.ModeNotServing)
	}

	// Healed, server 1 rejoins, and its client (whose session outlived the
	// cut) reads the write made without it.
	testenv.HealZK(t, 1)
	t.Logf("healed server 1 serves again after %v", testenv.WaitZKMode(t, 1, "follower", 20*time.Second).Round(time.Millisecond))
	waitSession(t, onOne, kazoo.SessionConnected, 15*time.Second)
	if after, _ := onOne.Session(); after.Generation != before.Generation {
		t.Errorf("the session of server 1's client expired during a %v cut (timeout %v)", time.Since(start).Round(time.Millisecond), ensembleClientTimeout)
	}
	waitFor(t, 10*time.Second, "server 1 to serve the write made while it was cut", func() bool {
		off, err := onOne.Consumergroup(group).FetchOffset(topic, 0)
		return err == nil && off == 2
	})

	// A killed leader is replaced; the survivors accept writes.
	old := testenv.EnsembleLeader(t)
	killed := time.Now()
	testenv.KillZK(t, old)
	gone := time.Now()
	leader := testenv.WaitLeader(t, 30*time.Second, old)
	t.Logf("killed leader %d; server %d leads %v after the SIGKILL (%v after kill-zk saw the process gone)",
		old, leader, time.Since(killed).Round(time.Millisecond), time.Since(gone).Round(time.Millisecond))
	survivor := connectZK(t, testenv.ZKServerAddr(leader))
	if err := survivor.Consumergroup(group).CommitOffset(topic, 0, 3); err != nil {
		t.Fatalf("write through the new leader %d: %v", leader, err)
	}
	testenv.StartZK(t, old)
	if m := testenv.ZKMode(old); m != "follower" {
		t.Errorf("restarted server %d reports mode %s, want follower", old, m)
	}
}

// ensembleClientTimeout is the session timeout of the test's ZooKeeper clients,
// long enough for a session to outlive a cut of a few seconds.
const ensembleClientTimeout = 20 * time.Second

// connectZK opens a kazoo client of one server only, closed when the test
// ends.
func connectZK(t *testing.T, addr string) *kazoo.Kazoo {
	t.Helper()
	conf := kazoo.NewConfig()
	conf.Timeout = ensembleClientTimeout
	kz, err := kazoo.NewKazoo([]string{addr}, conf)
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

// waitSession waits until kz's session reaches status and returns when it
// did (as the client recorded it).
func waitSession(t *testing.T, kz *kazoo.Kazoo, status kazoo.SessionStatus, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s, changed := kz.Session()
		if s.Status == status {
			return s.Since
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("session %s after %v, want %s", s.Status, timeout, status)
		}
	}
}

// makeFollower makes server i a follower: if it leads, it is restarted so
// that another server takes over.
func makeFollower(t *testing.T, i int) {
	t.Helper()
	if testenv.EnsembleLeader(t) != i {
		return
	}
	t.Logf("server %d leads; restarting it so that it follows", i)
	testenv.StopZK(t, i)
	testenv.WaitLeader(t, 30*time.Second, i)
	testenv.StartZK(t, i)
}

// restoreEnsemble leaves the ensemble as the test found it: every server
// connected to its peers, running and serving.
func restoreEnsemble(t *testing.T) {
	t.Helper()
	testenv.HealZK(t, 1)
	for i := 1; i <= testenv.ZKNodes(); i++ {
		testenv.StartZK(t, i)
	}
	testenv.EnsembleLeader(t)
}
