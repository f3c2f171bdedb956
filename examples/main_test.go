// Package examples_test builds the programs under examples/ and runs them
// against the local stack (integration/stack.sh up), as a user would.
package examples_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

func TestMain(m *testing.M) {
	// go-metrics, which sarama uses, starts one global meter ticker that
	// lives as long as the process.
	goleak.VerifyTestMain(m, leaks.Known()...)
}
