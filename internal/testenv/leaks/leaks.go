// Package leaks lists the goroutines the tests' leak checks (goleak)
// ignore, each left by a library this module cannot change. It is a
// package of its own so that only tests import goleak.
package leaks

import "go.uber.org/goleak"

// Known are the goroutines a package's leak check ignores, each left
// by a library this module cannot change:
//
//   - go-metrics (sarama's metrics library) starts one process-wide meter
//     arbiter the first time any meter is created and never stops it.
//   - go-zookeeper (v1.0.4) can wedge the loop goroutine of a connection
//     being closed: a request queued as Close begins gets an error in its
//     two-slot channel, its caller may return on Close without reading
//     it, its write then fails (a second error), and the loop's last
//     flush sends a third, which blocks forever. The connection is closed
//     and nothing waits for that goroutine; it is lost with its buffers.
//     TestIntegrationGoZookeeperCloseCanWedgeItsLoop shows the sequence,
//     and fails once go-zookeeper no longer does it (then drop the entry).
//
// Nothing of this module, kazoo, claim or sarama's clients is ignored, nor
// any other go-zookeeper goroutine: a connection left open still fails the
// check.
func Known() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/rcrowley/go-metrics.(*meterArbiter).tick"),
		goleak.IgnoreTopFunction("github.com/go-zookeeper/zk.(*Conn).flushRequests"),
	}
}
