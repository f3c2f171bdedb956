package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationClaimStolen: an operator deletes an owner node by hand, on
// a partition that is idle (nothing to commit). The group notices at once
// through its watch on the claim, stops the partition without committing
// and reports the loss; the partition is still assigned here and free, so
// the group claims it again at once (a new epoch) and consumes on from the
// committed offset: the partition does not stay unowned, and the offset
// never goes backwards.
func TestIntegrationClaimStolen(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produce(t, topic, 100)
	group := testenv.UniqueName("g")
	h := newHistory(t, group, topic, 1)

	cfg := testConfig()
	cfg.Offsets.CommitInterval = 50 * time.Millisecond
	cfg.Claim.RetryCooldown = 10 * time.Second // must not delay the claim again
	cg := join(t, group, []string{topic}, cfg)
	c := collect(cg, 1)
	h.attach(c.ledger)
	defer func() {
		closeGroup(t, cg)
		<-c.done
	}()
	waitFor(t, 30*time.Second, "the first 100 messages", func() bool { return c.ledger.distinct() >= 100 })

	kz := zkClient(t)
	kcg := kz.Consumergroup(group)
	waitFor(t, 10*time.Second, "offset 100 committed", func() bool {
		o, _ := kcg.FetchOffset(topic, 0)
		return o == 100
	})
	owner, watch, err := kcg.WatchPartitionOwner(topic, 0)
	if err != nil || owner == nil {
		t.Fatalf("owner before the deletion: %v, %v", owner, err)
	}

	// Delete the owner node of the idle partition, as an operator would.
	zkCliDelete(t, "/consumers/"+group+"/owners/"+topic+"/0")
	<-watch
	deleted := time.Now()
	waitFor(t, 10*time.Second, "the loss to be reported", func() bool {
		for _, err := range c.errors() {
			if errors.Is(err, kazoo.ErrClaimLost) {
				return true
			}
		}
		return false
	})
	noticed := time.Since(deleted)
	waitFor(t, 5*time.Second, "the group's claim again", func() bool {
		o, _ := kcg.PartitionOwner(topic, 0)
		return o != nil && o.ID == owner.ID
	})
	reclaimed := time.Since(deleted)
	t.Logf("owner node deleted on an idle partition: loss noticed and delivery stopped after %v, claimed again after %v",
		noticed.Round(time.Millisecond), reclaimed.Round(time.Millisecond))
	if noticed > time.Second {
		t.Errorf("the loss was noticed after %v, want within a second", noticed)
	}

	produce(t, topic, 100)
	waitFor(t, 30*time.Second, "all 200 messages", func() bool { return c.ledger.distinct() >= 200 })
	waitFor(t, 10*time.Second, "offset 200 committed", func() bool {
		o, _ := kcg.FetchOffset(topic, 0)
		return o == 200
	})
	h.assert(expectation{produced: map[int32]int64{0: 200}})
	if d := c.ledger.duplicates(); d != 0 {
		t.Errorf("%d duplicates: the idle partition had everything committed", d)
	}
}

// zkCliDelete deletes a znode with ZooKeeper's own command line client, as
// an operator would.
func zkCliDelete(t testing.TB, path string) {
	t.Helper()
	zkCli(t, "delete", path)
}
