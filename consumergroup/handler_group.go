package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/IBM/sarama"
)

// HandlerGroup consumes a group through a sarama.ConsumerGroupHandler, with
// the API of sarama.ConsumerGroup (which it implements): Consume, Errors,
// Close, Pause and Resume; CloseContext bounds the close by a context.
// Create it with NewConsumerGroup. A handler written for
// sarama.NewConsumerGroup runs on it unchanged.
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

	turn    chan struct{} // holds a token while a Consume runs; one session at a time
	closing chan struct{} // closed by Close
	once    sync.Once
	// cutCtx ends when a CloseContext's context ends: the running
	// session's membership closes with it (ConsumerGroup.CloseContext).
	cutCtx context.Context
	cut    context.CancelCauseFunc

	errors    chan error
	errorsMu  sync.RWMutex // report reads under it; Close closes errors under the write lock
	errClosed bool

	curMu   sync.Mutex
	current *ConsumerGroup // the running session's membership, for Pause and Resume

	metrics *groupMetrics // the group's, which every session's membership shares
	// session is the running Consume's session, for CloseContext; under
	// curMu.
	session *handlerSession
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
	g := &HandlerGroup{
		name:      name,
		zookeeper: append([]string(nil), zookeeper...),
		config:    config,
		turn:      make(chan struct{}, 1),
		closing:   make(chan struct{}),
		errors:    make(chan error, max(config.ChannelBufferSize, 1)),
		metrics:   newGroupMetrics(config.MetricRegistry, name),
	}
	g.cutCtx, g.cut = context.WithCancelCause(context.Background())
	return g, nil
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
	select {
	case g.turn <- struct{}{}:
	case <-g.closing:
		return sarama.ErrClosedConsumerGroup
	}
	defer g.endTurn()
	s := newHandlerSession(ctx, g, handler)
	if !g.begin(s) { // Close began while this call waited
		s.cancel(sarama.ErrClosedConsumerGroup)
		return sarama.ErrClosedConsumerGroup
	}
	cg, err := joinGroupWith(g.name, topics, g.zookeeper, g.config, joinOptions{runFence: true, sink: s})
	if err != nil {
		s.cancel(err)
		close(s.handlersReturned) // nothing joined, nothing to wait for
		close(s.left)
		return err
	}
	s.cg = cg
	forwarded := g.forward(cg.Errors())
	g.setCurrent(cg)
	defer g.setCurrent(nil)
	if g.isClosing() { // Close began while this call joined: no Setup
		s.cancel(sarama.ErrClosedConsumerGroup)
		return s.release(false, forwarded)
	}

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
	if cause := context.Cause(s.ctx); errors.Is(cause, ErrFencedInstanceID) {
		return errors.Join(cause, s.release(true, forwarded))
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
// returns AlreadyClosing. It is CloseContext with a context that never
// ends.
func (g *HandlerGroup) Close() error {
	return g.CloseContext(context.Background())
}

// CloseContext is Close bounded by ctx as well. When ctx ends before
// Consume returns, the session's membership closes as
// ConsumerGroup.CloseContext's does when its context ends: the drains stop
// waiting for marks, what was marked is committed if ZooKeeper and Kafka
// answer within a quarter of the session timeout, and the ZooKeeper
// session is closed, deleting the registration and the owner nodes. It
// then returns once the membership has left the group, without waiting for
// the handler's Setup, ConsumeClaim or Cleanup: Consume returns, and
// Errors() closes, once they do. It returns a *CloseCutShortError then
// (matching ctx's error with errors.Is, and naming what was cut short),
// and nil otherwise; the membership's own errors are Consume's. A second
// call waits as the first does (its ctx cutting the session's close short
// as the first's would) and returns AlreadyClosing. See docs/shutdown.md.
func (g *HandlerGroup) CloseContext(ctx context.Context) error {
	first := false
	g.once.Do(func() {
		first = true
		close(g.closing)
	})
	err := g.awaitConsume(ctx)
	if !first {
		return AlreadyClosing
	}
	return err
}

// awaitConsume waits for the running Consume, if any, to return, then
// closes Errors(). When ctx ends first it cuts the session's close short
// and waits only for its membership to leave the group (see CloseContext).
func (g *HandlerGroup) awaitConsume(ctx context.Context) error {
	select {
	case g.turn <- struct{}{}: // no Consume runs, or it has returned
		g.closeErrors()
		<-g.turn
		return nil
	default:
	}
	select {
	case g.turn <- struct{}{}:
		g.closeErrors()
		<-g.turn
		return nil
	case <-ctx.Done():
	}
	g.cut(context.Cause(ctx))
	g.curMu.Lock()
	s, joined := g.session, g.current != nil
	g.curMu.Unlock()
	var left <-chan struct{} // nil: no session yet, or one still joining
	if s != nil {
		left = s.left
		if joined {
			s.cancel(sarama.ErrClosedConsumerGroup)
			s.leave() // a handler's Setup may hold the session up
		}
	}
	select {
	case g.turn <- struct{}{}:
		g.closeErrors()
		<-g.turn
		var cutShort []string
		if s != nil && isClosed(s.left) {
			cutShort = slices.Clone(s.leftCut)
		}
		return newCloseCutShortError(ctx, cutShort)
	case <-left:
	}
	// What the membership's close cut short (nothing when none joined).
	cutShort := slices.Clone(s.leftCut)
	select {
	case <-s.handlersReturned: // Consume returns at once: it waits for nothing else
		g.turn <- struct{}{}
		g.closeErrors()
		<-g.turn
	default:
		cutShort = append(cutShort, cutHandlers)
	}
	return newCloseCutShortError(ctx, cutShort)
}

// begin records s as the running session, unless Close began.
func (g *HandlerGroup) begin(s *handlerSession) bool {
	g.curMu.Lock()
	defer g.curMu.Unlock()
	if g.isClosing() {
		return false
	}
	g.session = s
	return true
}

// endTurn ends a Consume call: once Close began, Errors() is closed as
// the last Consume returns.
func (g *HandlerGroup) endTurn() {
	g.curMu.Lock()
	g.session = nil
	g.curMu.Unlock()
	if g.isClosing() {
		g.closeErrors()
	}
	<-g.turn
}

// closeErrors closes Errors(), once.
func (g *HandlerGroup) closeErrors() {
	g.errorsMu.Lock()
	defer g.errorsMu.Unlock()
	if !g.errClosed {
		g.errClosed = true
		close(g.errors)
	}
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
