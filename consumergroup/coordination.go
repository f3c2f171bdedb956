package consumergroup

import "github.com/zkgroup/kafka/internal/fence"

// newSessionFence builds the fence over the group's ZooKeeper session,
// pausing cg.gate (see package fence).
func newSessionFence(cg *ConsumerGroup) *fence.Fence {
	return fence.New(cg.config.Session.SelfFenceFraction, fence.Deps{
		Session: cg.kazoo,
		Gate:    cg.gate,
		Stop:    cg.stopper,
		Log:     cg.log,
		OnPause: func() { cg.met().fencePauses.Inc(1) },
	})
}
