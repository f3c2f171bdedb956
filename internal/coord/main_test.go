package coord

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Known()...)
}
