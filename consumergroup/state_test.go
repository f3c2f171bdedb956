package consumergroup

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// stateTestGroup is a group with an offset manager and nothing behind it
// (no ZooKeeper, no commit loop).
func stateTestGroup() *ConsumerGroup {
	cg := &ConsumerGroup{
		name:     "g",
		log:      slog.New(slog.DiscardHandler),
		config:   NewConfig(),
		instance: &kazoo.ConsumergroupInstance{ID: "member-1"},
	}
	cg.offsetManager = newOffsetManager(cg, &OffsetManagerConfig{})
	return cg
}

// claimAt tracks tp as claimed with epoch, stored at next, with no owner.
func (om *offsetManager) claimAt(tp topicPartition, epoch int32, next int64) *offsets.Partition {
	c := &kazoo.PartitionClaim{Topic: tp.Topic, Partition: tp.Partition, Epoch: epoch}
	return om.Adopt(offsets.TopicPartition(tp), c, offsets.Stored{ZkNext: next, ZkVersion: -1, KafkaNext: -1}, nil)
}

// State lists the claimed partitions, sorted, with what their offsets
// say; a partition tracked without a claim is not owned and left out.
func TestStateListsOwnedPartitions(t *testing.T) {
	cg := stateTestGroup()
	om := cg.offsetManager
	b := om.claimAt(topicPartition{"t", 1}, 7, 40)
	a := om.claimAt(topicPartition{"t", 0}, 3, 10)
	om.Adopt(offsets.TopicPartition{Topic: "u", Partition: 0}, nil, offsets.Stored{ZkNext: 5, ZkVersion: -1, KafkaNext: -1}, nil)
	a.Offer(14)
	a.Delivered(14)
	b.SeeHighWaterMark(55)

	st := cg.State()
	if st.Group != "g" || st.InstanceID != "member-1" {
		t.Errorf("group %q, instance %q; want g, member-1", st.Group, st.InstanceID)
	}
	want := []PartitionState{
		{Topic: "t", Partition: 0, ClaimEpoch: 3, Committed: 10, Delivered: 15, HighWaterMark: -1, Lag: -1},
		{Topic: "t", Partition: 1, ClaimEpoch: 7, Committed: 40, Delivered: -1, HighWaterMark: 55, Lag: 15},
	}
	if len(st.Partitions) != len(want) {
		t.Fatalf("partitions %+v, want %+v", st.Partitions, want)
	}
	for i := range want {
		if st.Partitions[i] != want[i] {
			t.Errorf("partition %d: %+v, want %+v", i, st.Partitions[i], want[i])
		}
	}
}

// After Close the partitions are gone from State, whatever the committer
// still tracks; without a session the session is "none" and not healthy.
func TestStateAfterCloseIsEmpty(t *testing.T) {
	cg := stateTestGroup()
	cg.offsetManager.claimAt(topicPartition{"t", 0}, 1, 10)
	cg.closed.Store(true)
	st := cg.State()
	if st.Partitions == nil || len(st.Partitions) != 0 {
		t.Errorf("partitions after Close: %#v, want empty", st.Partitions)
	}
	if st.Session.Status != "none" || st.Session.Healthy() {
		t.Errorf("session %+v (healthy %v), want none, not healthy", st.Session, st.Session.Healthy())
	}
	g := &HandlerGroup{name: "h"}
	if hs := g.State(); hs.Group != "h" || hs.Session.Status != "none" || len(hs.Partitions) != 0 || hs.Partitions == nil {
		t.Errorf("a HandlerGroup between sessions: %+v, want group h, session none, no partitions", hs)
	}
}

// A partition's JSON carries its last commit's error as a message.
func TestPartitionStateJSON(t *testing.T) {
	b, err := json.Marshal(PartitionState{Topic: "t", Partition: 2, LastCommitErr: errors.New("refused")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"topic":"t"`, `"partition":2`, `"last_commit_error":"refused"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	if b, _ := json.Marshal(PartitionState{}); strings.Contains(string(b), "last_commit_error") {
		t.Errorf("%s has a last_commit_error without an error", b)
	}
}
