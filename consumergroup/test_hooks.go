package consumergroup

import (
	"sync/atomic"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/worker"
)

// testHooks lets this package's tests reach into a partition's life at
// points no outside event can hit reliably (between a final commit and its
// release; a claim whose reply is lost). Production code never sets them;
// each is read once at its point, so a nil hook costs one atomic load.
var testHooks struct {
	// beforeRelease runs in the worker's goroutine as it enters releasing.
	beforeRelease atomic.Pointer[func(cg *ConsumerGroup, w *worker.Worker)]
	// wrapRegistry wraps the claim registry of a group as it connects.
	wrapRegistry atomic.Pointer[func(cg *ConsumerGroup, reg claim.Registry) claim.Registry]
}

// registryFor returns the claim registry of cg, wrapped by the test hook
// when one is set.
func registryFor(cg *ConsumerGroup, reg claim.Registry) claim.Registry {
	if wrap := testHooks.wrapRegistry.Load(); wrap != nil {
		return (*wrap)(cg, reg)
	}
	return reg
}

// runBeforeRelease runs the beforeRelease hook, if set.
func runBeforeRelease(cg *ConsumerGroup, w *worker.Worker) {
	if h := testHooks.beforeRelease.Load(); h != nil {
		(*h)(cg, w)
	}
}
