package integration

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// The test stack: topics, the group config of the tests, a ZooKeeper client
// and waiting on a condition. Producers, consumers, the ledger and the
// history recorder have files of their own.

// newTopic creates a topic with a unique name and the given partition count,
// waits until every partition has a leader, and deletes it after the test.
func newTopic(t testing.TB, partitions int32) string {
	t.Helper()
	name := testenv.UniqueName("it")
	testenv.CreateTopic(t, name, partitions)
	return name
}

// kraftRefresh is Kafka.RefreshInterval in the tests on a KRaft stack:
// short, so topology changes show up quickly.
const kraftRefresh = time.Second

// testConfig is the group config the integration tests use: short timeouts
// so rebalances and closes are quick, frequent commits. On a KRaft stack
// (testenv.KRaft) it reads the cluster's metadata from Kafka, every
// kraftRefresh, since ZooKeeper has none.
func testConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	if testenv.KRaft() {
		cfg.Kafka.Brokers = testenv.KafkaAddrs()
		cfg.Kafka.RefreshInterval = kraftRefresh
	}
	if os.Getenv("ZKGROUP_DEBUG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// zkClient opens a kazoo client of the test stack's ZooKeeper, closed when
// the test ends.
func zkClient(t testing.TB) *kazoo.Kazoo {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("connect to ZooKeeper at %s: %v", testenv.ZKAddr(), err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
