package parallel

import (
	"testing"

	"github.com/rcrowley/go-metrics"
	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	// go-metrics starts a process-wide goroutine on the first meter (the
	// integration tests' sarama clients), which goleak would flag.
	metrics.UseNilMetrics = true
	goleak.VerifyTestMain(m, leaks.Known()...)
}
