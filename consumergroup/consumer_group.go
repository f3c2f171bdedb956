package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/monitor"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/internal/worker"
	"github.com/zkgroup/kafka/kazoo"
)

// ConsumerGroup is one running instance of a consumer group. Create it with
// JoinConsumerGroup; read Messages() (and Errors()), mark processed messages
// with CommitUpto, and Close it when done.
type ConsumerGroup struct {
	config *Config
	name   string
	chroot string            // the ZooKeeper chroot in use: Zookeeper.Chroot, or the connection string's
	topics []string          // a static subscription; nil with a pattern
	filter *assign.WhiteList // a white_list subscription (JoinConsumerGroupPattern); nil if static
	log    *slog.Logger

	kazoo    *kazoo.Kazoo
	group    *kazoo.Consumergroup
	instance *kazoo.ConsumergroupInstance
	client   sarama.Client
	consumer sarama.Consumer
	claimer  *claim.Claimer
	fetch    *fetch.Engine // the partitions' fetches: round fetchers, their connections, the feed budget
	topicSrc topics.Source // partitions and leaders: ZooKeeper or Kafka

	offsetManager *offsetManager
	kafkaOffsets  offsets.GroupOffsets // Kafka's group offsets; nil with Offsets.Storage zookeeper
	metrics       *groupMetrics
	monitors      *monitor.Monitors // the session watch and the lag refresh; nil until the join ends
	joinSteps     joinSteps         // how long each step of the join took, for its log record

	messages chan *sarama.ConsumerMessage
	outbox   *worker.Outbox // messages' outbox when Messages.Buffer > 0
	sink     worker.Sink    // where workers hand messages; nil: messages
	errors   chan error
	stopper  chan struct{} // closed by Close
	// closeExpired is closed when Close's time runs out (see expireClose):
	// calls without a context (Kafka's offset reads and commits) are
	// abandoned then, so Close keeps its bound.
	closeExpired chan struct{}
	expireOnce   sync.Once
	sweepWake    chan struct{} // a worker ended that may have left an owner node
	watchSlots   chan struct{} // the workers' claim watches being armed (worker.Deps.WatchSlots)
	done         chan struct{} // closed when the manage loop has stopped every partition
	fenceStop    chan struct{} // closed by Close just before the teardown: the session fence stops
	fenceDone    chan struct{} // closed when the session fence has returned; nil: none runs
	gate         *fence.Gate   // closed while this instance is fenced off

	errorsMu      sync.RWMutex // report holds it to read, Close to close errors
	closeMu       sync.Mutex
	closeDone     chan struct{} // nil until a close starts; closed when it has ended
	closed        atomic.Bool
	droppedErrors atomic.Int64

	// drainsCut is closed when CloseContext's context ends: the drains
	// stop waiting for marks (see cutDrains).
	drainsCut chan struct{}
	cutOnce   sync.Once
	// drainLeftMarks is set when a drain that drainsCut ended left
	// messages unmarked (see reportWorkerPartition).
	drainLeftMarks atomic.Bool
}

// JoinConsumerGroup joins (creating if needed) the consumer group name,
// consuming topics, coordinated through the ZooKeeper servers zookeeper
// ("host:port"; a "/chroot" suffix on the last one is honoured). A nil
// config means NewConfig(). The group runs on a copy of config, never
// written to; as upstream, the copy's ClientID is name when config's still
// has sarama's default. Offsets.Initial decides where a partition without a
// stored offset starts, as upstream: a Config.Consumer.Offsets.Initial that
// disagrees is ignored, which the join logs once (see docs/sarama-config.md).
//
// It returns an error naming the problem for invalid arguments or config,
// and when ZooKeeper, the brokers or the registration cannot be reached;
// nothing is left running then.
func JoinConsumerGroup(name string, topics []string, zookeeper []string, config *Config) (*ConsumerGroup, error) {
	return joinGroup(name, topics, zookeeper, config, true)
}

// joinGroup is JoinConsumerGroup; runFence false leaves the session fence
// idle, so tests can drive the delivery gate themselves.
func joinGroup(name string, topics []string, zookeeper []string, config *Config, runFence bool) (*ConsumerGroup, error) {
	return joinGroupWith(name, topics, zookeeper, config, joinOptions{runFence: runFence})
}

// joinOptions are joinGroupWith's choices beyond JoinConsumerGroup's
// arguments.
type joinOptions struct {
	runFence bool        // false: the session fence stays idle (tests)
	sink     worker.Sink // nil: Messages()
}

// joinGroupWith is joinGroup with a sink for the claimed partitions'
// messages (Consume's claims).
func joinGroupWith(name string, topics []string, zookeeper []string, config *Config, opts joinOptions) (*ConsumerGroup, error) {
	if err := validateJoinArgs(name, topics, zookeeper); err != nil {
		return nil, err
	}
	return startGroup(name, topics, nil, zookeeper, config, opts)
}

// startGroup is joinGroupWith after the arguments were validated: it consumes
// topics, or the topics filter matches when filter is not nil.
func startGroup(name string, topics []string, filter *assign.WhiteList, zookeeper []string, config *Config, opts joinOptions) (*ConsumerGroup, error) {
	config = groupConfig(name, config) // never written back to the caller's
	if err := config.Validate(); err != nil {
		return nil, err
	}
	// sarama's partition consumers must return their errors, for the
	// workers to report them.
	config.Consumer.Return.Errors = true
	servers, chroot := kazoo.ParseConnectionString(kazoo.BuildConnectionString(zookeeper))
	zkConf := *config.Zookeeper
	if chroot != "" {
		zkConf.Chroot = chroot
	}

	cg := &ConsumerGroup{
		config:    config,
		name:      name,
		chroot:    zkConf.Chroot,
		topics:    append([]string(nil), topics...),
		filter:    filter,
		log:       config.logger().With("group", name),
		messages:  make(chan *sarama.ConsumerMessage),
		errors:    make(chan error, max(config.ChannelBufferSize, 1)),
		stopper:   make(chan struct{}),
		fenceStop: make(chan struct{}),

		closeExpired: make(chan struct{}),
		drainsCut:    make(chan struct{}),
		sweepWake:    make(chan struct{}, 1),
		watchSlots:   worker.NewWatchSlots(),
		done:         make(chan struct{}),
		gate:         fence.NewGate(),
		sink:         opts.sink,
	}
	if n := config.Messages.Buffer; n > 0 && cg.sink == nil {
		cg.outbox = worker.NewOutbox(n)
		cg.messages = cg.outbox.C()
	}
	if config.Consumer.Offsets.Initial != config.Offsets.Initial { // NewConsumerGroup refuses this
		cg.log.Warn("Offsets.Initial is used; Config.Consumer.Offsets.Initial, which disagrees, is ignored",
			"Offsets.Initial", initialName(config.Offsets.Initial),
			"Config.Consumer.Offsets.Initial", initialName(config.Consumer.Offsets.Initial))
	}
	if err := cg.connect(servers, &zkConf); err != nil {
		cg.teardown()
		return nil, err
	}
	cg.log = cg.log.With("instance", cg.instance.ID)
	cg.log.Info("joined consumer group", "topics", topics, "pattern", filter.String(), "took", cg.joinSteps.attrs())

	cg.metrics = newGroupMetrics(config.Config.MetricRegistry, name)
	cg.fetch = cg.newFetchEngine()
	cg.offsetManager = newOffsetManager(cg, &OffsetManagerConfig{CommitInterval: config.Offsets.CommitInterval})
	cg.offsetManager.Start()
	// Before the fence runs: the monitors clear zkgroup-session-fenced as
	// they start, which must not undo a pause the fence set at once.
	cg.startMonitors()
	fence := newSessionFence(cg)
	if opts.runFence {
		cg.fenceDone = make(chan struct{})
		go func() {
			defer close(cg.fenceDone)
			fence.Run()
		}()
	}
	go cg.manage(fence)
	return cg, nil
}

// connect opens the ZooKeeper session and the Kafka client and registers
// this instance. On error the caller tears down what was opened.
func (cg *ConsumerGroup) connect(servers []string, zkConf *kazoo.Config) error {
	var err error
	steps := cg.joinSteps.start()
	if cg.kazoo, err = kazoo.NewKazoo(servers, zkConf); err != nil {
		return fmt.Errorf("consumergroup: %w", err)
	}
	steps.done("zookeeper")
	brokers := cg.config.Kafka.Brokers
	if len(brokers) == 0 { // upstream's way: the brokers registered in ZooKeeper
		if brokers, err = cg.kazoo.BrokerList(); err != nil && !errors.Is(err, kazoo.ErrNoNode) {
			return fmt.Errorf("consumergroup: list brokers: %w", err)
		}
		if len(brokers) == 0 {
			return fmt.Errorf("consumergroup: no Kafka broker is registered in ZooKeeper under %s/brokers/ids"+
				" (a cluster in KRaft mode registers none: set Kafka.Brokers)", zkConf.Chroot)
		}
	}
	cg.group = cg.kazoo.Consumergroup(cg.name)
	if id := cg.config.Consumer.Group.InstanceId; id != "" {
		cg.instance = cg.group.StaticInstance(id, cg.config.Static.GraceWindow)
	} else {
		cg.instance = cg.group.NewInstance()
	}

	if cg.client, err = sarama.NewClient(brokers, cg.config.Config); err != nil {
		return fmt.Errorf("consumergroup: connect to Kafka at %v: %w", brokers, err)
	}
	if cg.consumer, err = newSaramaConsumer(cg.client); err != nil {
		return fmt.Errorf("consumergroup: %w", err)
	}
	steps.done("kafka")
	if err := cg.openOffsetStores(); err != nil {
		return err
	}
	if err := cg.openTopicSource(); err != nil {
		return err
	}
	steps.done("stores")

	claimConf := claim.NewConfig()
	claimConf.ProcessingTimeout = cg.config.Offsets.ProcessingTimeout
	claimConf.ExtraTime = cg.config.claimBudget() - cg.config.Offsets.ProcessingTimeout
	claimConf.InitialInterval = cg.config.Claim.InitialInterval
	claimConf.MaxInterval = min(cg.config.Claim.MaxInterval, cg.config.Offsets.ProcessingTimeout)
	claimConf.InitialInterval = min(claimConf.InitialInterval, claimConf.MaxInterval)
	claimConf.RetryCooldown = cg.config.Claim.RetryCooldown
	// A release that cannot get through within the session timeout is moot:
	// the session, and with it the owner node, is gone by then. The
	// timeout is the one the server granted, which may differ from the
	// one asked for (Zookeeper.Timeout).
	claimConf.ReleaseTimeout = cg.config.Zookeeper.Timeout
	if granted := cg.kazoo.SessionTimeout(); granted > 0 {
		claimConf.ReleaseTimeout = granted
	}
	reg := closingRegistry{claim.NewKazooRegistryFor(cg.group, cg.instance), cg.closeExpired}
	if cg.claimer, err = claim.New(registryFor(cg, reg), claimConf); err != nil {
		return fmt.Errorf("consumergroup: %w", err)
	}

	if err := cg.group.Create(); err != nil {
		return fmt.Errorf("consumergroup: create group: %w", err)
	}
	if err := cg.joinRegister(); err != nil {
		return fmt.Errorf("consumergroup: register instance %s: %w", cg.instance.ID, err)
	}
	steps.done("register")
	return nil
}

// teardown closes whatever connect opened.
func (cg *ConsumerGroup) teardown() {
	if cg.topicSrc != nil {
		cg.topicSrc.Close()
	}
	if cg.fetch != nil {
		cg.fetch.Close()
	}
	if s, ok := cg.kafkaOffsets.(*offsets.KafkaOffsets); ok {
		s.Close() // its commit connection, also when the join failed
	}
	if cg.consumer != nil {
		_ = cg.consumer.Close()
	}
	if cg.client != nil {
		_ = cg.client.Close()
	}
	if cg.kazoo != nil {
		_ = cg.kazoo.Close()
	}
}

// awaitFence waits for the session fence to return: at once, or as soon
// as its probe in flight does, which closing the session answers (the
// ZooKeeper client fails every request left when it closes). A second
// bounds the wait, as the client bounds its own close.
func (cg *ConsumerGroup) awaitFence() {
	if cg.fenceDone == nil {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-cg.fenceDone:
	case <-t.C:
		cg.log.Warn("the session fence's last probe is still unanswered after the session closed; not waiting for it")
	}
}

// Messages returns the channel of messages to process. By default it is
// unbuffered: a message is handed over only when the application takes it.
// With Config.Messages.Buffer it holds that many: a partition that moves
// waits for the application to read and mark what it has there, and what
// the application must not read any more is taken back, so a rebalance
// never strands a buffer of messages that the next owner delivers again.
// It is closed by Close.
func (cg *ConsumerGroup) Messages() <-chan *sarama.ConsumerMessage {
	return cg.messages
}

// Errors returns the channel of errors: *PartitionError (alias of
// *sarama.ConsumerError) for problems with one partition or topic,
// *OffsetConflictError for resolved conflicts, *claim.Error inside a
// *PartitionError for claims that ran out of budget, *FetchFallbackError
// inside a *PartitionError for a partition the batch feed handed to
// sarama's partition consumer. Sends never block:
// when the channel (of capacity Config.ChannelBufferSize) is full, the error
// is logged and dropped. It is closed by Close.
func (cg *ConsumerGroup) Errors() <-chan error {
	return cg.errors
}

// report sends err on Errors() without blocking.
func (cg *ConsumerGroup) report(err error) {
	if err == nil {
		return
	}
	cg.errorsMu.RLock() // Close closes errors under the write lock
	defer cg.errorsMu.RUnlock()
	if cg.closed.Load() {
		return
	}
	select {
	case cg.errors <- err:
	default:
		cg.droppedErrors.Add(1)
		cg.met().errorsDropped.Inc(1)
		cg.log.Warn("Errors() is full; error dropped", "err", err)
	}
}

// reportPartition reports err for topic/partition as a *PartitionError.
func (cg *ConsumerGroup) reportPartition(topic string, partition int32, err error) {
	cg.log.Warn("partition error", "topic", topic, "partition", partition, "err", err)
	cg.report(newPartitionError(topic, partition, err))
}

// Closed reports whether Close has completed.
func (cg *ConsumerGroup) Closed() bool {
	return cg.closed.Load()
}

// Close stops consuming: every owned partition stops fetching, waits up to
// Offsets.ProcessingTimeout for delivered messages to be marked, commits and
// releases its claim (all partitions in parallel); then the instance
// deregisters and Messages() and Errors() are closed. A second call returns
// AlreadyClosing. It is CloseContext with a context that never ends.
//
// Close returns within ProcessingTimeout + 1.5 x the session timeout (plus
// the time sarama takes to close its Kafka connections), even if nobody
// reads either channel and ZooKeeper is out of reach: partitions that have
// not stopped by ProcessingTimeout + the session timeout are unblocked by
// closing the session (at once when the instance is fenced off); the last
// commit round then waits at most a quarter of the session timeout for
// Kafka, and deregistering at most another quarter. Closing the session
// deletes the registration and the claims anyway. docs/shutdown.md says
// what to set for a pod's grace period.
func (cg *ConsumerGroup) Close() error {
	return cg.CloseContext(context.Background())
}

// CloseContext is Close bounded by ctx as well: it never waits longer than
// Close, and when ctx ends first the close speeds up safely, as when
// Close's own deadline passes, only sooner. The drains stop waiting for
// marks; each partition commits what was marked and releases its claim
// if ZooKeeper and Kafka answer within a quarter of the session timeout;
// then the session is closed, which deletes the registration and every
// owner node left. Nothing is committed after a partition's release, and
// messages delivered but not marked are delivered again by the next
// owner. It then returns a *CloseCutShortError, which matches ctx's error
// (context.DeadlineExceeded, say) with errors.Is and names what was cut
// short, joined with the close's other errors. So it returns within about
// a quarter of the session timeout after ctx ends (plus sarama's closing
// of its connections). A second call returns AlreadyClosing once the
// first close has ended; while it runs, ctx hurries it as the first's
// would. Call it from
// a SIGTERM handler with a context a few seconds shorter than the grace
// period: see docs/shutdown.md.
func (cg *ConsumerGroup) CloseContext(ctx context.Context) error {
	cg.closeMu.Lock()
	underWay := cg.closeDone
	if underWay == nil {
		cg.closeDone = make(chan struct{})
	}
	cg.closeMu.Unlock()
	if underWay != nil {
		return cg.hurryClose(ctx, underWay)
	}
	defer close(cg.closeDone)
	cg.log.Info("closing")
	deadline := time.Now().Add(cg.config.Offsets.ProcessingTimeout + cg.config.Zookeeper.Timeout)
	watch := cg.watchClose(ctx)
	close(cg.stopper)
	if cg.monitors != nil {
		cg.monitors.Stop() // a lag refresh in flight is cancelled: no gauge is set after it
	}
	stopTakingBack := cg.takeBackUnreadWhileClosing()
	cg.awaitStop(deadline)
	stopTakingBack()
	// The commit loop's last round may wait on Kafka (a read of its
	// offsets): not past the partitions' deadline, nor a quarter of the
	// session timeout after them.
	expire := time.AfterFunc(max(time.Until(deadline), cg.config.Zookeeper.Timeout/4), cg.expireClose)
	var errs []error
	if e := cg.offsetManager.Close(); e != nil {
		errs = append(errs, e)
	}
	expire.Stop()
	if e := cg.deregister(); e != nil {
		errs = append(errs, e)
	}
	cut := watch.stop()
	// The fence guards until here: the drains' final commits, the last
	// commit round and the deregistration all run while it can still
	// pause the gate, which also refuses commits to Kafka (docs/shutdown.md).
	close(cg.fenceStop)
	cg.teardown()
	cg.awaitFence()
	if cg.monitors != nil {
		cg.monitors.AwaitSessionWatch() // ended by the session's close: the session gauges show it closed
	}
	cg.errorsMu.Lock()
	cg.closed.Store(true)
	if cg.outbox != nil {
		// Every worker took back what it left there as it stopped.
		if n := cg.outbox.Discard(); n > 0 {
			cg.log.Error("messages left in the Messages() buffer after every partition stopped: discarded, not handed out", "messages", n)
		}
	}
	close(cg.messages)
	close(cg.errors)
	cg.errorsMu.Unlock()
	err := closeErrorWith(cut, errs)
	cg.log.Info("closed", "err", err)
	return err
}

// hurryClose is a CloseContext called while another close is under way
// (done is closed when it has ended): it waits for that close, and when
// ctx ends first it hurries it as its own context would, so it keeps
// CloseContext's bound. It returns AlreadyClosing.
func (cg *ConsumerGroup) hurryClose(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return AlreadyClosing
	case <-ctx.Done():
	}
	watch := cg.watchClose(ctx)
	<-done
	_ = watch.stop()
	return AlreadyClosing
}

// awaitStop waits for the manage loop to stop every partition. A request
// to a ZooKeeper that is out of reach can hang for many seconds, so when the
// instance is fenced off, or the partitions have not stopped within
// ProcessingTimeout plus the session timeout, it closes the session first:
// every pending request then fails at once. Nothing is lost by that: a
// commit or release that cannot get through is worth nothing, and the
// session's end deletes our registration and claims.
func (cg *ConsumerGroup) awaitStop(deadline time.Time) {
	if cg.gate.Paused() {
		cg.log.Warn("closing while fenced off from ZooKeeper: closing the session first")
		cg.expireClose()
		_ = cg.kazoo.Close()
	}
	bound := time.NewTimer(time.Until(deadline))
	defer bound.Stop()
	select {
	case <-cg.done:
	case <-bound.C:
		cg.log.Warn("partitions did not stop in time; closing the session to unblock them")
		cg.expireClose()
		_ = cg.kazoo.Close()
		<-cg.done
	}
}

// expireClose tells every call without a context that Close stopped
// waiting for it (closeExpired).
func (cg *ConsumerGroup) expireClose() {
	cg.expireOnce.Do(func() { close(cg.closeExpired) })
}

// deregister removes the registration, waiting at most a quarter of the
// session timeout: cut off from ZooKeeper, a request can hang far longer, and closing
// the session (which Close does next) deletes the registration anyway.
func (cg *ConsumerGroup) deregister() error {
	if s, _ := cg.kazoo.Session(); s.Status == kazoo.SessionClosed {
		return nil // closed while fenced: the session's end removed the registration
	}
	done := make(chan error, 1)
	go func() { done <- cg.instance.Deregister() }() // unblocked by the session's close at the latest
	select {
	case err := <-done:
		if s, _ := cg.kazoo.Session(); s.Status == kazoo.SessionClosed {
			return nil // CloseContext closed the session meanwhile, removing the registration
		}
		if err != nil && !errors.Is(err, kazoo.ErrInstanceNotRegistered) {
			return fmt.Errorf("consumergroup: deregister: %w", err)
		}
		return nil
	case <-time.After(cg.config.Zookeeper.Timeout / 4):
		cg.log.Warn("deregistering timed out; closing the session removes the registration")
		return nil
	}
}

// Logf logs a formatted message at info level through Config.Logger, as
// upstream's Logf does through sarama.Logger.
func (cg *ConsumerGroup) Logf(format string, args ...any) {
	cg.log.Info(fmt.Sprintf(format, args...))
}

// InstanceRegistered reports whether this instance's registration exists in
// ZooKeeper.
func (cg *ConsumerGroup) InstanceRegistered() (bool, error) {
	return cg.instance.Registered()
}

// CommitUpto marks message, and every earlier message of its partition, as
// processed. The offset is committed at the next commit (every
// Offsets.CommitInterval, FlushOffsets, or when the partition is released).
// Marks of partitions this instance no longer owns, and marks below an
// earlier mark, are ignored. It returns nil, as upstream does.
func (cg *ConsumerGroup) CommitUpto(message *sarama.ConsumerMessage) error {
	if message != nil {
		cg.offsetManager.MarkMessage(message)
	}
	return nil
}

// FlushOffsets commits the marked offsets of every owned partition now.
func (cg *ConsumerGroup) FlushOffsets() error {
	return cg.offsetManager.Flush()
}
