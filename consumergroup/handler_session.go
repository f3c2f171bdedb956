package consumergroup

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/worker"
)

// handlerSession is one Consume call: the sarama.ConsumerGroupSession its
// handler sees, and the claimSink of its membership, which turns each
// claimed partition into a claim run by the handler's ConsumeClaim.
type handlerSession struct {
	group   *HandlerGroup
	handler sarama.ConsumerGroupHandler
	cg      *ConsumerGroup // the membership; set before Setup, read after it

	ctx    context.Context
	cancel context.CancelCauseFunc

	setupDone chan struct{} // closed once Setup has returned nil: claims may start

	// The session's end (release): left is closed once the membership
	// has left the group (closed is its error), handlersReturned once
	// every ConsumeClaim and Cleanup has returned. CloseContext waits for
	// the first, and not for the second once its context ended.
	leaveOnce        sync.Once
	closed           chan error
	left             chan struct{}
	handlersReturned chan struct{}
	leftCut          []string // what the membership's close cut short; set before left closes

	mu         sync.Mutex
	claims     map[topicPartition]*handlerClaim // claims whose ConsumeClaim may still read
	generation int32                            // bumped by every change of claims
	ending     bool                             // no claim starts any more
	running    sync.WaitGroup                   // ConsumeClaim goroutines; Add under mu while !ending
}

var _ sarama.ConsumerGroupSession = (*handlerSession)(nil)

func newHandlerSession(ctx context.Context, g *HandlerGroup, handler sarama.ConsumerGroupHandler) *handlerSession {
	s := &handlerSession{
		group:      g,
		handler:    handler,
		setupDone:  make(chan struct{}),
		claims:     make(map[topicPartition]*handlerClaim),
		generation: 1,
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	s.closed, s.left, s.handlersReturned = make(chan error, 1), make(chan struct{}), make(chan struct{})
	return s
}

// Open implements worker.Sink: once Setup has returned, it starts the
// handler's ConsumeClaim for w's partition on a channel of its own.
func (s *handlerSession) Open(w *worker.Worker, _ *offsets.Partition, next int64) (chan *sarama.ConsumerMessage, <-chan struct{}) {
	if !w.Await(s.setupDone) {
		return nil, nil
	}
	initial := next
	if initial < 0 {
		initial = s.cg.config.Offsets.Initial // as sarama's claims report it
	}
	c := &handlerClaim{worker: w, initial: initial, msgs: make(chan *sarama.ConsumerMessage, min(s.cg.config.ChannelBufferSize, maxClaimBuffer)),
		returned: make(chan struct{})}
	tp := topicPartition(w.Partition())
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		return nil, nil
	}
	claimCtx, cancel := context.WithCancel(s.ctx)
	c.session, c.cancelSession = claimSession{s, claimCtx}, cancel
	s.claims[tp] = c
	s.generation++
	s.running.Add(1)
	s.mu.Unlock()
	go s.consumeClaim(c)
	return c.msgs, c.returned
}

// Close implements worker.Sink: it closes the claim's channel, which tells
// ConsumeClaim to return.
func (s *handlerSession) Close(w *worker.Worker) {
	tp := topicPartition(w.Partition())
	s.mu.Lock()
	c := s.claims[tp]
	if c == nil || c.worker != w {
		s.mu.Unlock()
		return
	}
	delete(s.claims, tp)
	s.generation++
	s.mu.Unlock()
	c.revoked.Store(true)
	close(c.msgs)
}

// consumeClaim runs the handler on c. As under sarama, a ConsumeClaim that
// returns while its claim runs and the session lasts ends the session: its
// partition would otherwise stay claimed with nobody reading it.
func (s *handlerSession) consumeClaim(c *handlerClaim) {
	defer s.running.Done()
	defer close(c.returned)
	defer c.cancelSession()
	if err := s.handler.ConsumeClaim(c.session, c); err != nil {
		s.group.report(newPartitionError(c.Topic(), c.Partition(), err))
	}
	if !c.revoked.Load() && s.ctx.Err() == nil {
		s.cg.log.Warn("ConsumeClaim returned while its claim was running; ending the session",
			"topic", c.Topic(), "partition", c.Partition())
		s.cancel(sarama.ErrSessionConsumeClaimExited)
	}
}

// release ends the session, in order: no claim starts any more; every
// partition stops (its channel closes, it drains, commits and releases)
// and the member leaves the group, while ConsumeClaim goroutines return;
// then Cleanup (when Setup succeeded); then it waits for the membership to
// be gone and its errors forwarded. The session's context is already
// cancelled.
func (s *handlerSession) release(cleanup bool, forwarded <-chan struct{}) error {
	s.mu.Lock()
	s.ending = true
	s.mu.Unlock()

	s.leave()
	s.running.Wait()

	var errs []error
	if cleanup {
		if err := s.handler.Cleanup(s); err != nil {
			s.group.report(newPartitionError("", -1, err))
			errs = append(errs, err)
		}
	}
	close(s.handlersReturned)
	if err := <-s.closed; err != nil {
		errs = append(errs, err)
	}
	<-forwarded
	return errors.Join(errs...)
}

// leave closes the membership, once, in a goroutine of its own, bounded
// by the group's CloseContext (cutCtx): every partition stops, drains,
// commits and releases, and the member leaves the group. It is called by
// release, or by CloseContext once its context ended while a handler's
// Setup holds the session up.
func (s *handlerSession) leave() {
	s.leaveOnce.Do(func() {
		go func() {
			err := s.cg.CloseContext(s.group.cutCtx)
			var cut *CloseCutShortError
			if errors.As(err, &cut) {
				s.leftCut = cut.CutShort
			}
			close(s.left)
			s.closed <- err
		}()
	})
}

// Claims implements sarama.ConsumerGroupSession: the partitions, by topic,
// whose claims run now (sorted). It changes as claims start and end.
func (s *handlerSession) Claims() map[string][]int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]int32)
	for tp := range s.claims {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// MemberID implements sarama.ConsumerGroupSession: this member's instance
// ID, the name of its node under /consumers/<group>/ids.
func (s *handlerSession) MemberID() string {
	return s.cg.instance.ID
}

// GenerationID implements sarama.ConsumerGroupSession: 1 at Setup, and one
// more each time a claim starts or ends. It is this member's count, not
// the group's: the group has no generation.
func (s *handlerSession) GenerationID() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generation
}

// MarkOffset implements sarama.ConsumerGroupSession: offset is the next
// offset to consume (the processed message's offset + 1), as in sarama. It
// is CommitUpto of the message before offset: ignored for a partition not
// claimed here, at or below an earlier mark, or above what was delivered.
// After the partition was rewound by an offset conflict it is ignored
// until the redelivered messages are marked through MarkMessage. metadata
// is ignored: ZooKeeper stores offsets as bare numbers.
func (s *handlerSession) MarkOffset(topic string, partition int32, offset int64, _ string) {
	s.cg.offsetManager.MarkAsProcessed(topic, partition, offset-1)
}

// MarkMessage implements sarama.ConsumerGroupSession: it is CommitUpto of
// msg. metadata is ignored.
func (s *handlerSession) MarkMessage(msg *sarama.ConsumerMessage, _ string) {
	if msg != nil {
		s.cg.offsetManager.MarkMessage(msg)
	}
}

// ResetOffset implements sarama.ConsumerGroupSession as sarama does: it
// moves the mark of a partition claimed here back to offset (the next
// offset to consume), and the next commit stores it, although it is lower
// than the stored offset; it is ignored for an offset above the current
// mark. Consumption goes on where it is: a later MarkMessage or MarkOffset
// moves the mark forward again, and otherwise the partition's next owner
// (or next session) starts at offset. The messages delivered before the
// reset count as unprocessed: when the claim ends it does not wait for
// their marks. metadata is ignored.
func (s *handlerSession) ResetOffset(topic string, partition int32, offset int64, _ string) {
	s.cg.offsetManager.ResetOffset(topic, partition, offset)
}

// Commit implements sarama.ConsumerGroupSession: it commits the marks of
// every claimed partition now and waits for the commits; failures go to
// Errors().
func (s *handlerSession) Commit() {
	for _, err := range s.cg.offsetManager.CommitEach() {
		var conflict *OffsetConflictError
		if !errors.As(err, &conflict) { // conflicts are reported by commit
			s.group.report(err)
		}
	}
}

// Context implements sarama.ConsumerGroupSession: cancelled when the
// session starts to end (see HandlerGroup.Consume); not by a rebalance.
func (s *handlerSession) Context() context.Context {
	return s.ctx
}
