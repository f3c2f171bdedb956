package worker

import (
	"testing"

	"github.com/rcrowley/go-metrics"
	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	// go-metrics starts a process-wide goroutine on the first meter (a
	// sarama client's), which goleak would flag; it is not ours. Set once,
	// before any test.
	metrics.UseNilMetrics = true
	goleak.VerifyTestMain(m, leaks.Known()...)
}
