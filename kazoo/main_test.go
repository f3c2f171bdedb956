package kazoo

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

// TestMain fails the package's tests if any goroutine (a connection's
// loops, a watch converter) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Known()...)
}
