package coord

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testenv.KnownLeaks()...)
}
