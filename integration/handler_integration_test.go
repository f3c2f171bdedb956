package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationHandlerCleanRebalance is TestIntegrationCleanRebalance
// through Consume and a handler that marks every message: a second member
// joining moves half the partitions with 0 duplicates and 0 lost, and the
// partitions the first member keeps keep flowing. Its claims are processed
// in parallel, one goroutine each, so the first member holds each message
// 20 ms to keep a backlog in every partition when the second joins.
func TestIntegrationHandlerCleanRebalance(t *testing.T) {
	testenv.Integration(t)
	runCleanRebalance(t, handlerMember, 20*time.Millisecond)
}

// TestIntegrationHandlerZombie is TestIntegrationZombie through Consume: a
// member cut off from ZooKeeper past its session timeout stops delivering
// on every claim before another member can take its partitions, commits
// nothing after, never delivers a partition while the other does, and no
// committed offset goes backwards; reconnected, it gets claims again in
// the same session.
func TestIntegrationHandlerZombie(t *testing.T) {
	testenv.Integration(t)
	runZombie(t, testenv.ZKAddr(), testConfig, handlerMember)
}
