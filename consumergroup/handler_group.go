package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
)

// HandlerGroup consumes a group through a sarama.ConsumerGroupHandler, with
// the API of sarama.ConsumerGroup (which it implements): Consume, Errors,
// Close, Pause and Resume. Create it with NewConsumerGroup. A handler
// written for sarama.NewConsumerGroup runs on it unchanged.
//
// Membership, claims, the session fence, drains, commits and releases are
// those of JoinConsumerGroup, partition by partition: only the way messages
// reach the application differs. Each claimed partition gets a channel of
// its own, read by the handler's ConsumeClaim in a goroutine of its own,
// where JoinConsumerGroup hands every partition's messages to one shared
// Messages() channel.
//
// Rebalances are cooperative, as under sarama's cooperative protocol: one
// Consume call is one session, from Setup to Cleanup; a rebalance ends only
// the claims of the partitions that move (their Messages() channel closes,
// their ConsumeClaim returns) and starts claims for the partitions gained,
// while every other claim keeps running. Consume does not return on a
// rebalance. See Consume.
type HandlerGroup struct {
	name      string
	zookeeper []string
	config    *Config

	lock    sync.Mutex    // held by Consume for its whole run; one session at a time
	closing chan struct{} // closed by Close
	once    sync.Once

	errors    chan error
	errorsMu  sync.RWMutex // report reads under it; Close closes errors under the write lock
	errClosed bool

	curMu   sync.Mutex
	current *ConsumerGroup // the running session's membership, for Pause and Resume

	metrics *groupMetrics // the group's, which every session's membership shares
}

var _ sarama.ConsumerGroup = (*HandlerGroup)(nil)

// NewConsumerGroup returns a HandlerGroup for the consumer group name,
// coordinated through the ZooKeeper servers zookeeper ("host:port"; a
// "/chroot" suffix on the last one is honoured), with config (nil:
// NewConfig()). As JoinConsumerGroup, it runs on a copy of config, never
// written to, whose ClientID is name when config's still has sarama's
// default.
//
// It validates its arguments and config and connects to nothing: each
// Consume call joins the group (connects to ZooKeeper and Kafka and
// registers) and leaves it when it returns. It returns an error naming the
// problem for an invalid name, address list or config; unlike
// JoinConsumerGroup, it refuses a config whose Config.Consumer.Offsets.Initial
// and Offsets.Initial disagree (a *ConfigError naming both).
func NewConsumerGroup(name string, zookeeper []string, config *Config) (*HandlerGroup, error) {
	if err := validateGroupArgs(name, zookeeper); err != nil {
		return nil, err
	}
	config = groupConfig(name, config) // never written back to the caller's
	if err := config.Validate(); err != nil {
		return nil, err
	}
	// A handler moved over from sarama.NewConsumerGroup relies on
	// Consumer.Offsets.Initial: refuse rather than pick one.
	if err := config.initialOffsetMismatch(); err != nil {
		return nil, err
	}
	return &HandlerGroup{
		name:      name,
		zookeeper: append([]string(nil), zookeeper...),
		config:    config,
		closing:   make(chan struct{}),
		errors:    make(chan error, max(config.ChannelBufferSize, 1)),
		metrics:   newGroupMetrics(config.MetricRegistry, name),
	}, nil
}

// Consume joins the group as a new member consuming topics and runs one
// session through handler until ctx is done, Close is called, or a
// ConsumeClaim returns while its claim was still running; then it leaves
// the group and returns. Calls are serialised: a second Consume waits for
// the first to return. After Close it returns sarama.ErrClosedConsumerGroup.
//
// The session, in order:
//
//  1. The instance registers under /consumers/<group>/ids (a new member,
//     with a new MemberID, per call) and starts claiming the partitions
//     assigned to it.
//  2. Setup runs once. Its session has no claims yet: no claim delivers
//     before Setup returns (partitions claimed meanwhile wait). A Setup
//     error ends the session at once and is returned.
//  3. Each partition, once claimed (its previous owner has committed and
//     released it), gets a claim: ConsumeClaim runs in a goroutine of its
//     own, reading the claim's Messages() channel, from the committed
//     offset (or Offsets.Initial when none is stored).
//  4. A rebalance (a member joins or leaves, partitions are added), a claim
//     lost to another instance, or this member's ZooKeeper session
//     expiring, closes the Messages() channel of each partition that
//     leaves this member; its ConsumeClaim must return. The partition then
//     waits up to Offsets.ProcessingTimeout for every message it delivered
//     to be marked, commits, and releases its claim (a lost claim or an
//     expired session commits nothing). The other claims keep running, and
//     claims for gained partitions start as in step 3. Claims() and
//     GenerationID() change with each claim that starts or ends.
//  5. At the end, the session's Context() is cancelled first; every claim
//     then stops as in step 4, Cleanup runs once every ConsumeClaim has
//     returned, and Consume returns once every partition is committed and
//     released and the member has left the group. A partition still waiting
//     for marks when Cleanup runs commits what Cleanup marks.
//
// Under sarama's eager protocol every rebalance ends the session, so
// Consume returns and the caller's loop calls it again; here, as under
// sarama's cooperative protocol, the session outlives rebalances, and the
// usual loop around Consume runs it again only after a session ended for
// another reason. The difference from sarama's cooperative protocol: the
// group has no coordinator and no generation of its own; claims come and
// go one partition at a time, as their previous owners let go of them,
// rather than in rounds.
//
// Errors go to Errors(): those of the membership (as JoinConsumerGroup's),
// an error ConsumeClaim returns (as a *PartitionError), and Cleanup's. It
// returns Setup's or Cleanup's error, or the error of joining or leaving.
func (g *HandlerGroup) Consume(ctx context.Context, topics []string, handler sarama.ConsumerGroupHandler) error {
	if handler == nil {
		return errors.New("consumergroup: Consume needs a handler")
	}
	if g.isClosing() {
		return sarama.ErrClosedConsumerGroup
	}
	g.lock.Lock()
	defer g.lock.Unlock()
	if g.isClosing() { // Close began while this call waited
		return sarama.ErrClosedConsumerGroup
	}

	s := newHandlerSession(ctx, g, handler)
	cg, err := joinGroupWith(g.name, topics, g.zookeeper, g.config, joinOptions{runFence: true, sink: s})
	if err != nil {
		s.cancel(err)
		return err
	}
	s.cg = cg
	forwarded := g.forward(cg.Errors())
	g.setCurrent(cg)
	defer g.setCurrent(nil)

	if err := handler.Setup(s); err != nil {
		s.cancel(fmt.Errorf("consumergroup: Setup: %w", err))
		return errors.Join(err, s.release(false, forwarded))
	}
	close(s.setupDone)

	select {
	case <-s.ctx.Done():
	case <-g.closing:
		s.cancel(sarama.ErrClosedConsumerGroup)
	}
	return s.release(true, forwarded)
}

// forward copies the session's errors to Errors() until errs is closed,
// and closes the returned channel then.
func (g *HandlerGroup) forward(errs <-chan error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for err := range errs {
			g.report(err)
		}
	}()
	return done
}

// Errors returns the channel of errors of every session: as
// ConsumerGroup.Errors(), plus the errors handlers return. Sends never
// block: an error that finds the channel (of capacity
// Config.ChannelBufferSize) full is dropped. Unlike sarama's, it needs no
// Consumer.Return.Errors: errors are always returned. It is closed by Close.
func (g *HandlerGroup) Errors() <-chan error {
	return g.errors
}

// report sends err on Errors() without blocking.
func (g *HandlerGroup) report(err error) {
	if err == nil {
		return
	}
	g.errorsMu.RLock()
	defer g.errorsMu.RUnlock()
	if g.errClosed {
		return
	}
	select {
	case g.errors <- err:
	default:
		g.met().errorsDropped.Inc(1)
		g.config.logger().Warn("Errors() is full; error dropped", "group", g.name, "err", err)
	}
}

// Close ends the running session, if any (as its context's end does: see
// Consume), waits for Consume to return, and closes Errors(). Later
// Consume calls return sarama.ErrClosedConsumerGroup. A second Close
// returns AlreadyClosing.
func (g *HandlerGroup) Close() error {
	err := AlreadyClosing
	g.once.Do(func() {
		close(g.closing)
		g.lock.Lock() // the running Consume, if any, has returned
		g.errorsMu.Lock()
		g.errClosed = true
		close(g.errors)
		g.errorsMu.Unlock()
		g.lock.Unlock()
		err = nil
	})
	return err
}

func (g *HandlerGroup) isClosing() bool {
	select {
	case <-g.closing:
		return true
	default:
		return false
	}
}

func (g *HandlerGroup) setCurrent(cg *ConsumerGroup) {
	g.curMu.Lock()
	g.current = cg
	g.curMu.Unlock()
}

// group returns the running session's membership, or nil.
func (g *HandlerGroup) group() *ConsumerGroup {
	g.curMu.Lock()
	defer g.curMu.Unlock()
	return g.current
}

// Pause suspends delivery and fetching of the given partitions, as
// sarama's does: it applies to the partitions consumed at the time of the
// call (a claim that starts later is not paused) and does not cause a
// rebalance. Nothing fetched after the call reaches the handler before
// Resume, on every fetch path. It does nothing between sessions.
func (g *HandlerGroup) Pause(partitions map[string][]int32) {
	if c := g.group(); c != nil {
		c.pausePartitions(partitions, true)
	}
}

// Resume resumes partitions paused with Pause or PauseAll.
func (g *HandlerGroup) Resume(partitions map[string][]int32) {
	if c := g.group(); c != nil {
		c.pausePartitions(partitions, false)
	}
}

// PauseAll is Pause for every partition consumed at the time of the call.
func (g *HandlerGroup) PauseAll() {
	if c := g.group(); c != nil {
		c.pauseAll(true)
	}
}

// ResumeAll resumes every paused partition.
func (g *HandlerGroup) ResumeAll() {
	if c := g.group(); c != nil {
		c.pauseAll(false)
	}
}
