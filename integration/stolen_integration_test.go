package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationClaimStolen: an operator deletes an owner node by hand.
// The group notices at once through its watch on the claim (it has nothing
// to commit), reports the partition lost and stops it without committing.
// Another client claims the partition meanwhile; the group delivers nothing
// while it holds it. Once the other client lets go, the group claims the
// partition again (it is still assigned here) and consumes on from the
// committed offset: the partition does not stay unowned.
func TestIntegrationClaimStolen(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produce(t, topic, 100)
	group := testenv.UniqueName("g")
	offsets := observeOffsets(t, group, topic, 1)

	cfg := testConfig()
	cfg.Offsets.CommitInterval = 50 * time.Millisecond
	cfg.Claim.RetryCooldown = 2 * time.Second
	cg := join(t, group, []string{topic}, cfg)
	c := collect(cg)
	defer func() {
		closeGroup(t, cg)
		<-c.done
	}()
	waitFor(t, 30*time.Second, "the first 100 messages", func() bool { return c.ledger.distinct() >= 100 })

	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	waitFor(t, 10*time.Second, "offset 100 committed", func() bool {
		o, _ := kz.Consumergroup(group).FetchOffset(topic, 0)
		return o == 100
	})

	// Steal the claim: delete the owner node. The group notices at once,
	// whether or not it has anything to commit, and reports it.
	zkCliDelete(t, "/consumers/"+group+"/owners/"+topic+"/0")
	deleted := time.Now()
	waitFor(t, 10*time.Second, "the loss to be reported", func() bool {
		for _, err := range c.errors() {
			if errors.Is(err, kazoo.ErrClaimLost) {
				return true
			}
		}
		return false
	})
	t.Logf("loss reported %v after zkCli's delete returned", time.Since(deleted).Round(time.Millisecond))

	// Another instance claims during the group's cool-down; the group
	// delivers nothing while the rogue holds the partition.
	rogue := kz.Consumergroup(group).Instance("rogue")
	stolen, err := rogue.Claim(topic, 0)
	if err != nil {
		t.Fatalf("rogue claim during the cool-down: %v", err)
	}
	before := len(c.ledger.snapshot())
	produce(t, topic, 50)
	time.Sleep(2 * cfg.Claim.RetryCooldown)
	if n := len(c.ledger.snapshot()); n != before {
		t.Fatalf("the group delivered %d messages while the rogue owned the partition", n-before)
	}

	// The rogue lets go; the group claims again and finishes the topic.
	if err := rogue.Release(stolen); err != nil {
		t.Fatalf("rogue release: %v", err)
	}
	produce(t, topic, 50)
	waitFor(t, 30*time.Second, "all 200 messages", func() bool { return c.ledger.distinct() >= 200 })
	waitFor(t, 10*time.Second, "offset 200 committed", func() bool {
		o, _ := kz.Consumergroup(group).FetchOffset(topic, 0)
		return o == 200
	})
	owner, err := kz.Consumergroup(group).PartitionOwner(topic, 0)
	if err != nil || owner == nil || owner.ID == "rogue" {
		t.Errorf("owner after the rogue left: %v, %v; want the group's instance", owner, err)
	}
	if r := offsets.Regressions(); len(r) != 0 {
		t.Errorf("offsets went backwards: %v", r)
	}
	t.Logf("claim stolen and returned: %d deliveries for 200 messages (re-deliveries after the loss: %d)",
		len(c.ledger.snapshot()), c.ledger.duplicates())
}

// zkCliDelete deletes a znode with ZooKeeper's own command line client, as
// an operator would.
func zkCliDelete(t testing.TB, path string) {
	t.Helper()
	zkCli(t, "delete", path)
}
