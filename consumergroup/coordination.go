package consumergroup

import (
	"context"
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// The group's side of package coord (the coordination loop) and package
// fence (the session fence): what they are given, built from the group.

// manage runs the group's coordination loop until Close, then closes
// cg.done.
func (cg *ConsumerGroup) manage(f *fence.Fence) {
	defer close(cg.done)
	coord.New(coord.Config{
		InstanceID:      cg.instance.ID,
		Strategy:        cg.config.Assignment.Strategy,
		RetryCooldown:   cg.config.Claim.RetryCooldown,
		RegisterTimeout: cg.config.Zookeeper.ConnectTimeout,
		Topics:          cg.topics,
		WhiteList:       cg.filter,
	}, cg.coordDeps(f.Expired())).Run()
}

// coordDeps is what the coordination loop works with; expired is the
// session fence's signal.
func (cg *ConsumerGroup) coordDeps(expired <-chan struct{}) coord.Deps {
	return coord.Deps{
		ZooKeeper:        ownRegistration{coord.Kazoo(cg.kazoo, cg.group, cg.register), cg.instance},
		Reservations:     coord.KazooReservations(cg.group),
		Topics:           topics.WithLeaderMoves(cg.topicSrc, cg.fetch.LeadersMoved),
		Workers:          groupWorkers{cg},
		Expired:          expired,
		SweepWake:        cg.sweepWake,
		Stop:             cg.stopper,
		Log:              cg.log,
		Report:           func(topic string, partition int32, err error) { cg.report(newPartitionError(topic, partition, err)) },
		RegistrationPath: cg.registrationPath,
		Fenced:           cg.fencedOff,
		Metrics:          groupCoordMetrics{cg},
	}
}

// ownRegistration is the loop's ZooKeeper, where this instance's own
// registration counts only while this client's session holds it. A static
// id deleted and registered again by another instance before the loop read
// the group (the other won the race to register) would otherwise read as
// ours: the loop would go on under it and never learn it is fenced. Read
// as gone, it makes the loop register again, which says so.
type ownRegistration struct {
	coord.ZooKeeper
	self *kazoo.ConsumergroupInstance
}

func (z ownRegistration) Registration(id string) (*kazoo.Registration, error) {
	if id != z.self.ID {
		return z.ZooKeeper.Registration(id)
	}
	return z.self.OwnRegistration()
}

func (z ownRegistration) WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error) {
	if id != z.self.ID {
		return z.ZooKeeper.WatchRegistration(id)
	}
	return z.self.WatchOwnRegistration()
}

// newSessionFence builds the fence over the group's ZooKeeper session,
// pausing cg.gate (see package fence).
func newSessionFence(cg *ConsumerGroup) *fence.Fence {
	return fence.New(cg.config.Session.SelfFenceFraction, fence.Deps{
		Session:  cg.kazoo,
		Gate:     cg.gate,
		Stop:     cg.fenceStop,
		Log:      cg.log,
		OnPause:  func() { cg.met().fencePauses.Inc(1); cg.met().fenced.Update(1) },
		OnResume: func() { cg.met().fenced.Update(0) },
	})
}

// register registers this instance with its subscription (the topic
// list, or the whitelist) and the strategies it offers (registration.go).
func (cg *ConsumerGroup) register() error {
	data, err := cg.registration()
	if err != nil {
		return err
	}
	return cg.instance.RegisterWithSubscription(data)
}

// reregister registers the instance, trying again while the outcome is in
// doubt (see coord.Register).
func (cg *ConsumerGroup) reregister() error {
	return coord.Register(cg.register, cg.config.Zookeeper.ConnectTimeout, cg.stopper, cg.log)
}

// registrationPath is the znode of an instance's registration, as kazoo
// names it in errors.
func (cg *ConsumerGroup) registrationPath(id string) string {
	return cg.chroot + "/consumers/" + cg.name + "/ids/" + id
}

// groupWorkers starts the group's partition workers for the loop.
type groupWorkers struct{ cg *ConsumerGroup }

func (g groupWorkers) Start(tp coord.TopicPartition, prev coord.Worker, exited chan<- coord.Worker) coord.Worker {
	var p *worker.Worker // none
	if prev != nil {
		p = prev.(*worker.Worker) // the loop hands back only what Start and SweepOwnerNode returned
	}
	return g.cg.startWorker(topicPartition(tp), p, exited)
}

func (g groupWorkers) SweepOwnerNode(tp coord.TopicPartition) coord.Worker {
	return g.cg.sweepOwnerNode(topicPartition(tp))
}

// groupCoordMetrics records the loop's measurements in the group's metrics.
type groupCoordMetrics struct{ cg *ConsumerGroup }

func (m groupCoordMetrics) Owned(n int)                   { m.cg.met().owned.Update(int64(n)) }
func (m groupCoordMetrics) Rebalanced()                   { m.cg.met().rebalances.Inc(1) }
func (m groupCoordMetrics) RebalanceTook(d time.Duration) { m.cg.met().rebalanceTime.Update(ms(d)) }

// joinRegister registers the instance when it joins. A static instance
// whose id is registered by another session waits, up to twice the session
// timeout, for that registration to go: it is likely this instance's own
// predecessor that crashed, whose session expires by then. One timeout is
// not enough: the server expires a session up to a tick (at most half the
// least timeout it grants) after its timeout, counted from its last
// request, not from our first attempt. The timeout is the longer of ours
// and the one the predecessor's reservation records: a release that
// shortens Zookeeper.Timeout must still outwait the crashed session of the
// one before. A registration still held after that belongs to a live
// instance: the error wraps ErrFencedInstanceID. docs/static-members.md.
func (cg *ConsumerGroup) joinRegister() error {
	err := cg.reregister()
	if !errors.Is(err, ErrFencedInstanceID) {
		return err
	}
	wait := 2 * max(cg.config.Zookeeper.Timeout, cg.kazoo.SessionTimeout(), cg.heldSessionTimeout())
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	cg.log.Warn("our static id is registered by another session; waiting for it to expire", "within", wait)
	ctx, closing := cg.joinEnds()
	ended := ctx.Done()
	for {
		exists, gone, werr := cg.instance.WatchRegistrationGone()
		if werr != nil {
			return errors.Join(err, werr)
		}
		if !exists {
			if err = cg.reregister(); !errors.Is(err, ErrFencedInstanceID) {
				return err
			}
			continue // taken again meanwhile: wait for that one
		}
		select {
		case <-gone:
		case <-deadline.C:
			return err
		case <-cg.stopper:
			return err
		case <-ended:
			return errors.Join(context.Cause(ctx), err)
		case <-closing:
			return errors.Join(sarama.ErrClosedConsumerGroup, err)
		}
	}
}

// maxHeldSessionTimeout bounds the session timeout a reservation may make
// a restart wait for (twice it): a garbled or hand-written node must not
// hold a join for hours.
const maxHeldSessionTimeout = 5 * time.Minute

// heldSessionTimeout is the session timeout recorded in this static
// instance's reservation by the instance that last registered its id (0
// when there is none, or it cannot be read), at most maxHeldSessionTimeout.
func (cg *ConsumerGroup) heldSessionTimeout() time.Duration {
	m, err := cg.group.StaticMember(cg.instance.ID)
	if err != nil {
		return 0
	}
	return min(m.SessionTimeout, maxHeldSessionTimeout)
}

// joinEnds are what ends the handler API's session while it joins, so
// the wait for a held static id ends with them: Consume's ctx, and Close
// of its HandlerGroup. JoinConsumerGroup has neither: a background ctx
// and a nil channel.
func (cg *ConsumerGroup) joinEnds() (context.Context, <-chan struct{}) {
	if s, ok := cg.sink.(*handlerSession); ok {
		return s.ctx, s.group.closing
	}
	return context.Background(), nil
}

// fencedOff ends the handler API's session when another instance took
// this instance's static id (see coord.Deps.Fenced): Consume then returns
// the error, as sarama's returns FENCED_INSTANCE_ID. The Messages() API
// has it on Errors().
func (cg *ConsumerGroup) fencedOff(err error) {
	if s, ok := cg.sink.(*handlerSession); ok {
		s.cancel(err)
	}
}
