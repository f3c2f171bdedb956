package integration

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

// TestMain fails the package if any goroutine outlives its tests: every
// consumer group, observer, proxy and producer a test starts must be gone
// after Close.
//
// What it ignores is not ours, and is listed with the reasons in
// leaks.Known: go-metrics' process-wide meter arbiter, and the loop
// of a go-zookeeper connection that its own Close left blocked. Nothing of
// this module, kazoo, claim or sarama's clients is ignored, and a
// go-zookeeper connection left open still fails the check.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Known()...)
}
