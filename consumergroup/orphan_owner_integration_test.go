package consumergroup

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// orphanFixture is a topic with a few messages per partition and a kazoo
// client to look at its owner nodes.
type orphanFixture struct {
	t     *testing.T
	topic string
	group string
	kg    *kazoo.Consumergroup
}

func newOrphanFixture(t *testing.T, partitions int32) *orphanFixture {
	t.Helper()
	testenv.Integration(t)
	cfg := fenceTestConfig()
	f := &orphanFixture{t: t, topic: testenv.UniqueName("orphan"), group: testenv.UniqueName("orphan-g")}
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.CreateTopic(f.topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteTopic(f.topic) })
	pcfg := sarama.NewConfig()
	pcfg.Producer.Return.Successes = true
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p := range partitions {
		for range 3 {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: f.topic, Partition: p, Value: sarama.StringEncoder("m")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	f.kg = kz.Consumergroup(f.group)
	// One round trip, so that go-zookeeper's receive loop of this
	// connection runs before the fixture returns: it is started after the
	// session is, and a test taking goleak.IgnoreCurrent right after would
	// otherwise count it as the group's leak.
	if _, err := f.kg.Exists(); err != nil {
		t.Fatal(err)
	}
	return f
}

// owner returns the instance id in the partition's owner node, or "".
func (f *orphanFixture) owner(p int32) string {
	o, err := f.kg.PartitionOwner(f.topic, p)
	if err != nil || o == nil {
		return ""
	}
	return o.ID
}

// join joins the group and marks every message it gets at once.
func (f *orphanFixture) join(cfg *Config) *ConsumerGroup {
	f.t.Helper()
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = cg.Close() })
	go func() {
		for m := range cg.Messages() {
			_ = cg.CommitUpto(m)
		}
	}()
	go func() {
		for e := range cg.Errors() {
			f.t.Logf("%s: error: %v", cg.instance.ID, e)
		}
	}()
	return cg
}

// waitOwned waits until the partitions' owner nodes hold exactly the
// members' ids, each member at least one partition (with two partitions
// and two members: one each, as the assignment says), and fails the test
// after d.
func (f *orphanFixture) waitOwned(d time.Duration, partitions int32, why string, members ...*ConsumerGroup) {
	f.t.Helper()
	var state string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		owns := map[string]int{}
		state = ""
		for p := range partitions {
			o := f.owner(p)
			state += fmt.Sprintf(" p%d=%q", p, o)
			owns[o]++
		}
		ok := owns[""] == 0
		for _, m := range members {
			ok = ok && owns[m.instance.ID] > 0
		}
		if ok {
			return
		}
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.instance.ID
	}
	f.t.Errorf("%v after %s the partitions are not shared by the members %q:%s", d, why, ids, state)
}

// A reset that lands after an old owner's final commit and before its
// release moves the epoch under the release: the epoch-fenced delete is
// refused, and the owner node, which still belongs to the old owner's live
// session, must be deleted all the same (only while it is ours), or the
// instance the partition moved to can never claim it.
func TestIntegrationResetAfterFinalCommitReleasesOwnerNode(t *testing.T) {
	f := newOrphanFixture(t, 2)
	cfg := fenceTestConfig()
	x := f.join(cfg)
	f.waitOwned(15*time.Second, 2, "x joined", x)

	var once sync.Once
	hook := func(cg *ConsumerGroup, w *worker.Worker) {
		if cg != x || w.ClaimEnded() {
			return
		}
		once.Do(func() {
			// x committed the partition it hands over; now, before its
			// release, an operator resets the group.
			if err := f.kg.ResetOffsets(); err != nil {
				t.Errorf("reset: %v", err)
			}
		})
	}
	testHooks.beforeRelease.Store(&hook)
	t.Cleanup(func() { testHooks.beforeRelease.Store(nil) })

	y := f.join(cfg)
	// The bound: the session timeout plus a round trip, for the old owner
	// to let go; everything delivered is marked at once, so no drain waits.
	f.waitOwned(cfg.Zookeeper.Timeout+2*time.Second, 2, "y joined and a reset hit x's release", x, y)
}

// lostClaimReply is a claim registry whose claims apply in ZooKeeper but
// whose replies are lost: the attempt returns a connection error, and the
// retries that would find the node ours wait until the claim is stopped.
type lostClaimReply struct {
	claim.Registry
	mu   sync.Mutex
	sent map[int32]bool
}

func (r *lostClaimReply) TryClaim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	r.mu.Lock()
	sent := r.sent[partition]
	r.sent[partition] = true
	r.mu.Unlock()
	if sent {
		<-ctx.Done() // the retry never gets through before the stop
		return nil, ctx.Err()
	}
	if _, err := r.Registry.TryClaim(ctx, topic, partition); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("claim %s/%d: %w", topic, partition, zk.ErrConnectionClosed) // applied; reply lost
}

// A claim whose Multi applied but whose reply was lost is in doubt; if a
// rebalance stops the worker before a retry finds the node ours, the node
// stays under the live session unless the stopped claim cleans it up.
func TestIntegrationStoppedClaimInDoubtLeavesNoOwnerNode(t *testing.T) {
	f := newOrphanFixture(t, 2)
	cfg := fenceTestConfig()
	var x *ConsumerGroup
	var xmu sync.Mutex
	wrap := func(cg *ConsumerGroup, reg claim.Registry) claim.Registry {
		xmu.Lock()
		defer xmu.Unlock()
		if x != nil { // only the first member's claims lose their replies
			return reg
		}
		x = cg
		return &lostClaimReply{Registry: reg, sent: map[int32]bool{}}
	}
	testHooks.wrapRegistry.Store(&wrap)
	t.Cleanup(func() { testHooks.wrapRegistry.Store(nil) })

	xg := f.join(cfg)
	// x's claims applied: both owner nodes hold x's id, though x does not
	// know it.
	f.waitOwned(15*time.Second, 2, "x joined", xg)
	y := f.join(cfg)
	// One partition moves to y; x's worker for it is stopped while its
	// claim is in doubt. y must get it within the session timeout plus a
	// round trip.
	f.waitOwned(cfg.Zookeeper.Timeout+2*time.Second, 2, "y joined while x's claims were in doubt", xg, y)
}
