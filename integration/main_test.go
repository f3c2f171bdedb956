package integration

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives its tests: every
// consumer group, observer, proxy and producer a test starts must be gone
// after Close.
//
// One goroutine is ignored, and it is not ours: go-metrics (sarama's metrics
// library) starts a single process-wide meter arbiter the first time any
// meter is created, and never stops it by design. Nothing of this module,
// kazoo, claim, sarama's clients or go-zookeeper's connections is ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/rcrowley/go-metrics.(*meterArbiter).tick"),
	)
}
