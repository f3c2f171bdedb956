package monitor

import (
	"testing"

	"github.com/rcrowley/go-metrics"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// go-metrics starts a process-wide goroutine on the first meter (the
	// sarama connections' in the Kafka tests), which goleak would flag;
	// it is not ours.
	metrics.UseNilMetrics = true
	goleak.VerifyTestMain(m)
}
