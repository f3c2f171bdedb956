package consumergroup

import (
	"testing"

	"github.com/rcrowley/go-metrics"
	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	// go-metrics starts a process-wide goroutine on the first meter, which
	// goleak would flag; it is not ours. Set once, before any test: sarama
	// reads it in goroutines a test may leave winding down (a fetch
	// response decoded after the test returned).
	metrics.UseNilMetrics = true
	goleak.VerifyTestMain(m, leaks.Known()...)
}
