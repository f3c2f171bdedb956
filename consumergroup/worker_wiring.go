// The group's side of internal/worker: the partition workers'
// configuration and dependencies, built from the group, and the sink that
// hands their messages to Messages().

package consumergroup

import (
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/worker"
)

// topicPartition names one partition of one topic.
type topicPartition struct {
	Topic     string
	Partition int32
}

// maxClaimBuffer caps a claim's buffer: it bounds how long a clean stop
// waits for the handler to finish the buffer (see docs/recall.md).
const maxClaimBuffer = 64

// startWorker starts the worker of tp (see worker.Start).
func (cg *ConsumerGroup) startWorker(tp topicPartition, prev *worker.Worker, exited chan<- coord.Worker) *worker.Worker {
	return worker.Start(cg.workerConfig(), cg.workerDeps(), worker.TopicPartition(tp), prev, exited)
}

// sweepOwnerNode starts a sweeper for tp (see worker.Sweep).
func (cg *ConsumerGroup) sweepOwnerNode(tp topicPartition) *worker.Worker {
	return worker.Sweep(cg.workerConfig(), cg.workerDeps(), worker.TopicPartition(tp))
}

// workerConfig is the workers' configuration from cg's Config.
func (cg *ConsumerGroup) workerConfig() worker.Config {
	var cfg worker.Config
	if cg.instance != nil {
		cfg.InstanceID = cg.instance.ID
	}
	if c := cg.config; c != nil {
		cfg.ProcessingTimeout = c.Offsets.ProcessingTimeout
		cfg.RetryCooldown = c.Claim.RetryCooldown
		cfg.InitialInterval = c.Claim.InitialInterval
		cfg.MaxInterval = c.Claim.MaxInterval
		cfg.Initial = c.Offsets.Initial
	}
	return cfg
}

// workerDeps is what the workers use of cg.
func (cg *ConsumerGroup) workerDeps() worker.Deps {
	d := worker.Deps{
		Claimer:         cg.claimer,
		Registry:        cg.instance,
		Session:         cg.kazoo,
		Offsets:         cg.offsetManager,
		Fetch:           cg.fetch,
		Sink:            cg.claimSink,
		InitialOffset:   cg.initialOffset,
		Log:             cg.log,
		Metrics:         workerMetrics{cg},
		Report:          cg.report,
		ReportPartition: cg.reportWorkerPartition,
		Closing:         cg.closeExpired,
		Stopping:        cg.stopper,
		DrainsCut:       cg.drainsCut,
		WakeSweep:       cg.wakeForSweep,
		WatchSlots:      cg.watchSlots,
		BeforeRelease:   func(w *worker.Worker) { runBeforeRelease(cg, w) },
	}
	if cg.gate != nil {
		d.Gate = cg.gate
	}
	if cg.fetch != nil && len(cg.config.Consumer.Interceptors) > 0 {
		// The interceptors, once per message handed out; without any, the
		// hand-over keeps no record of what went out.
		d.HandingOut = cg.fetch.HandingOut
	}
	return d
}

// initialOffset asks the partition's leader for the offset Offsets.Initial
// names.
func (cg *ConsumerGroup) initialOffset(topic string, partition int32) (int64, error) {
	return cg.client.GetOffset(topic, partition, cg.config.Offsets.Initial)
}

// wakeForSweep wakes the manage loop after a worker ended that may have
// left an owner node, so the sweep runs at once rather than at the next
// resync.
func (cg *ConsumerGroup) wakeForSweep() {
	select {
	case cg.sweepWake <- struct{}{}:
	default:
	}
}

// workerMetrics records the workers' measurements in the group's metrics.
type workerMetrics struct{ cg *ConsumerGroup }

func (m workerMetrics) Claimed(wait time.Duration) {
	m.cg.met().claims.Inc(1)
	m.cg.met().claimWait.Update(ms(wait))
}

func (m workerMetrics) Ended(tp worker.TopicPartition) { m.cg.met().dropLag(topicPartition(tp)) }

// messagesSink hands every partition's messages to Messages().
type messagesSink struct{ cg *ConsumerGroup }

func (s messagesSink) Open(*worker.Worker, *offsets.Partition, int64) (chan *sarama.ConsumerMessage, <-chan struct{}) {
	return s.cg.messages, nil
}

func (messagesSink) Close(*worker.Worker) {}

// Outbox is the Messages() channel's outbox: nil when it is unbuffered.
func (s messagesSink) Outbox() *worker.Outbox { return s.cg.outbox }

// claimSink returns the group's sink: Messages() unless Consume set one.
func (cg *ConsumerGroup) claimSink() worker.Sink {
	if cg.sink != nil {
		return cg.sink
	}
	return messagesSink{cg}
}
