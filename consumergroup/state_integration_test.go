package consumergroup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
)

// State agrees with what was produced, delivered, marked and committed:
// two partitions of 3 messages each, all delivered; partition 0 marked up
// to offset 0, partition 1 to its end. The claim epochs are the epoch
// nodes' versions, the committed offsets ZooKeeper's, and after Close no
// partition is left and the session is closed.
func TestIntegrationStateMatchesOffsets(t *testing.T) {
	f := newOrphanFixture(t, 2)
	cfg := fenceTestConfig()
	cfg.Metrics.LagInterval = 200 * time.Millisecond
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	got := map[int32]int{}
	deadline := time.After(30 * time.Second)
	for got[0] < 3 || got[1] < 3 {
		select {
		case m := <-cg.Messages():
			got[m.Partition]++
			if m.Partition == 1 || m.Offset == 0 {
				_ = cg.CommitUpto(m)
			}
		case err := <-cg.Errors():
			t.Logf("error: %v", err)
		case <-deadline:
			t.Fatalf("delivered %v of 3 per partition", got)
		}
	}
	if err := cg.FlushOffsets(); err != nil {
		t.Fatal(err)
	}

	conn, _, err := zk.Connect([]string{testenv.ZKAddr()}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := []PartitionState{
		{Topic: f.topic, Partition: 0, Committed: 1, Delivered: 3, HighWaterMark: 3, Lag: 2},
		{Topic: f.topic, Partition: 1, Committed: 3, Delivered: 3, HighWaterMark: 3, Lag: 0},
	}
	for i := range want {
		_, stat, err := conn.Get(fmt.Sprintf("/consumers/%s/epochs/%s/%d", f.group, f.topic, i))
		if err != nil {
			t.Fatal(err)
		}
		want[i].ClaimEpoch = stat.Version
	}

	st := cg.State()
	if st.Group != f.group || st.InstanceID == "" {
		t.Errorf("group %q, instance %q; want %q and an id", st.Group, st.InstanceID, f.group)
	}
	if s := st.Session; s.Status != "connected" || !s.Connected || s.Fenced || s.Expirations != 0 || !s.Healthy() {
		t.Errorf("session %+v, want connected, not fenced, no expiry", s)
	}
	if len(st.Partitions) != 2 {
		t.Fatalf("partitions %+v, want 2", st.Partitions)
	}
	for i, p := range st.Partitions {
		stored, err := f.kg.FetchOffset(f.topic, int32(i))
		if err != nil || stored != p.Committed {
			t.Errorf("partition %d: State says committed %d, ZooKeeper holds %d (%v)", i, p.Committed, stored, err)
		}
		if p.LastCommit.IsZero() || p.LastCommitErr != nil || time.Since(p.LastCommit) > time.Minute {
			t.Errorf("partition %d: last commit at %v with %v, want a recent one without error", i, p.LastCommit, p.LastCommitErr)
		}
		p.LastCommit, p.LastCommitErr = time.Time{}, nil
		if p != want[i] {
			t.Errorf("partition %d: %+v, want %+v", i, p, want[i])
		}
	}

	if err := cg.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	st = cg.State()
	if len(st.Partitions) != 0 || st.Session.Connected || st.Session.Status != "closed" {
		t.Errorf("after Close: session %+v, %d partitions; want closed and none", st.Session, len(st.Partitions))
	}
}

// A HandlerGroup's State is its running session's: connected, with the
// claimed partition, and "none" once Consume has returned.
func TestIntegrationHandlerGroupState(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cfg := fenceTestConfig()
	g, err := NewConsumerGroup(f.group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := newRecordingHandler()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Consume(ctx, []string{f.topic}, h) }()
	for range 3 {
		select {
		case <-h.got:
		case <-time.After(30 * time.Second):
			t.Fatal("not every message delivered")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var st GroupState
	for st = g.State(); (len(st.Partitions) != 1 || st.Partitions[0].Committed != 3) && time.Now().Before(deadline); st = g.State() {
		time.Sleep(50 * time.Millisecond)
	}
	if len(st.Partitions) != 1 || st.Partitions[0].Committed != 3 || st.Partitions[0].Delivered != 3 || !st.Session.Healthy() {
		t.Errorf("during the session: %+v, want partition 0 committed and delivered to 3, healthy", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("consume: %v", err)
	}
	if st := g.State(); st.Session.Status != "none" || len(st.Partitions) != 0 {
		t.Errorf("after the session: %+v, want session none, no partitions", st)
	}
}
