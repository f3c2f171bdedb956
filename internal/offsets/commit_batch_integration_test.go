package offsets

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// Concurrent fenced commits through KazooRegistry, as the committer and a
// rebalance's final commits make them, reach ZooKeeper in fewer
// transactions than partitions: those that arrive while one is in flight
// go together in the next Multi. Each offset node's last write is one
// transaction (its Mzxid); the commits are counted by those.
func TestIntegrationKazooRegistryBatchesConcurrentCommits(t *testing.T) {
	testenv.Integration(t)
	const partitions = 64
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	group := kz.Consumergroup(testenv.UniqueName("commit-batch"))
	inst := group.Instance("a")
	reqs := make([]kazoo.ClaimRequest, partitions)
	for p := range reqs {
		reqs[p] = kazoo.ClaimRequest{Topic: "t", Partition: int32(p)}
	}
	claims := make([]*kazoo.PartitionClaim, partitions)
	for p, r := range inst.ClaimBatch(reqs) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		claims[p] = r.Claim
		if _, err := inst.CommitOffsetFenced(r.Claim, 1, -1); err != nil {
			t.Fatal(err)
		}
	}

	// The first commit's batch waits in instance() until every commit has
	// been called, so the rest queue behind it (and, before batching, every
	// commit waited there and then sent its own Multi).
	release := make(chan struct{})
	reg := KazooRegistry(group, func() *kazoo.ConsumergroupInstance { <-release; return inst })
	var calling, done sync.WaitGroup
	calling.Add(partitions)
	done.Add(partitions)
	versions := make([]int32, partitions)
	errs := make([]error, partitions)
	for p, c := range claims {
		go func() {
			defer done.Done()
			calling.Done()
			versions[p], errs[p] = reg.CommitOffsetFenced(c, 100, 0)
		}()
	}
	calling.Wait()
	time.Sleep(100 * time.Millisecond) // the calls reach the queue
	close(release)
	done.Wait()

	conn, _, err := zk.Connect([]string{testenv.ZKAddr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	transactions := map[int64]bool{}
	for p := range claims {
		node := fmt.Sprintf("/consumers/%s/offsets/t/%d", group.Name, p)
		data, stat, err := conn.Get(node)
		switch {
		case err != nil:
			t.Fatal(err)
		case errs[p] != nil || versions[p] != 1 || stat.Version != 1 || string(data) != "100":
			t.Fatalf("partition %d: commit answered %d, %v; node %q at version %d", p, versions[p], errs[p], data, stat.Version)
		}
		transactions[stat.Mzxid] = true
	}
	if len(transactions) >= partitions {
		t.Fatalf("%d concurrent commits made %d transactions, want them batched into fewer", partitions, len(transactions))
	}
	t.Logf("%d concurrent commits in %d transactions", partitions, len(transactions))
}
