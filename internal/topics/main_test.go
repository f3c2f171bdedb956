package topics

import (
	"testing"

	"github.com/rcrowley/go-metrics"
	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	// go-metrics starts a process-wide goroutine on the first meter (the
	// sarama client of SaramaMetadata makes one), which goleak would flag;
	// it is not ours.
	metrics.UseNilMetrics = true
	goleak.VerifyTestMain(m, leaks.Known()...)
}
