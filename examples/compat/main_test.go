package compat_test

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
