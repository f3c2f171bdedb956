package consumergroup

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// joinWithoutFence is JoinConsumerGroup with the session fence idle, so the
// test can hold the delivery gate paused as the fence does when ZooKeeper
// has not answered for SelfFenceFraction of the session timeout (a blip
// that the session survives).
func joinWithoutFence(t *testing.T, name string, topics []string, config *Config) *ConsumerGroup {
	t.Helper()
	cg, err := joinGroup(name, topics, []string{testenv.ZKAddr()}, config, false)
	if err != nil {
		t.Fatal(err)
	}
	return cg
}

func fenceTestConfig() *Config {
	cfg := NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 2 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Claim.RetryCooldown = 500 * time.Millisecond
	return cfg
}

// A partition that moves away while its owner is fenced off from ZooKeeper
// (a blip the session survives) must still be released: the owner node
// belongs to a live session, so nobody else would ever delete it, and the
// new assignee could never claim it.
func TestIntegrationFencedStopReleasesClaim(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("fence")
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), fenceTestConfig().Config)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	defer admin.DeleteTopic(topic)
	group := testenv.UniqueName("fence-g")
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	kg := kz.Consumergroup(group)
	owner := func(p int32) string {
		o, err := kg.PartitionOwner(topic, p)
		if err != nil || o == nil {
			return ""
		}
		return o.ID
	}
	waitFor := func(d time.Duration, what string, cond func() bool) bool {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if cond() {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("timed out after %v waiting for %s", d, what)
		return false
	}
	drain := func(cg *ConsumerGroup) {
		go func() {
			for m := range cg.Messages() {
				_ = cg.CommitUpto(m)
			}
		}()
		go func() {
			for e := range cg.Errors() {
				t.Logf("%s error: %v", cg.instance.ID, e)
			}
		}()
	}

	x := joinWithoutFence(t, group, []string{topic}, fenceTestConfig())
	drain(x)
	defer x.Close()
	if !waitFor(30*time.Second, "x to own both partitions", func() bool { return owner(0) == x.instance.ID && owner(1) == x.instance.ID }) {
		t.Fatal("setup failed")
	}

	x.gate.Set(true) // a ZooKeeper blip past the self-fence time; the session survives
	y, err := JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, fenceTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	drain(y)
	defer y.Close()
	time.Sleep(1500 * time.Millisecond) // x sees the new member and stops the partition it loses
	x.gate.Set(false)                   // ZooKeeper answers again

	budget := x.config.claimBudget() + 5*time.Second
	ok := waitFor(budget, "y to own one partition", func() bool { return owner(0) == y.instance.ID || owner(1) == y.instance.ID })
	if !ok {
		t.Errorf("after %v the partition x lost is still owned by x (owners: p0=%q p1=%q; x=%q y=%q): x stopped it while fenced, "+
			"skipped the release, and its live session keeps the owner node forever", budget, owner(0), owner(1), x.instance.ID, y.instance.ID)
	}
}
