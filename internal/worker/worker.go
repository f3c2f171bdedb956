package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/coord"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// Worker owns one assigned partition for as long as it stays
// assigned here: it claims it, consumes it, and on stop drains, commits and
// releases it. Its life is the state machine of Next, run by one
// goroutine; everybody else talks to it through its inbox (stop, abandon,
// lost, seek, pause), and it waits for nothing else. It is the manage
// loop's coord.Worker and the committer's offsets.Owner. See
// docs/worker.md.
type Worker struct {
	cfg    Config
	deps   Deps
	tp     TopicPartition
	prev   *Worker // a predecessor for the same partition still stopping
	log    *slog.Logger
	ctx    context.Context // ended by stop, abandon and loss
	cancel context.CancelFunc
	inbox  *Inbox
	exited chan<- coord.Worker // told when the worker ends on its own

	stopped  chan struct{} // closed by stop: the manage loop no longer waits for an exit
	stopOnce sync.Once

	done    chan struct{} // closed when run returns
	claimed chan struct{} // closed once the partition is claimed (or run returns first)
	opened  chan struct{} // closed once the first fetch source is open (or run returns first)
	// openExpected ends what Fetch.ExpectOpen counted when run began; run's
	// goroutine only.
	openExpected func()
	started      time.Time    // when the worker started: the claim wait's origin
	hwm          atomic.Int64 // the partition's high-water mark, as its fetch Sources set it

	// out receives the worker's messages: set once the partition is claimed,
	// by the group's Sink (Messages(), or the claim's own channel).
	out chan *sarama.ConsumerMessage
	// readerGone, when not nil, is closed once nobody reads out any more
	// (a handler's ConsumeClaim returned): set with out.
	readerGone <-chan struct{}
	// outbox, when not nil, is the partition's way into the buffered
	// channel out that every partition shares (SharedSink): sends go
	// through it, and a recall takes back only this partition's messages
	// from it, never by reading out. Set with out, kept after the sink
	// closes, unregistered before the release.
	outbox *OutboxPart
	// overtaken holds what a take-back by another partition's worker took
	// of this one after the application got a later message: the pause
	// it posted restarts below them (see takeOvertaken).
	overtaken overtakenMessages

	// What the states pass on to each other; run's goroutine only.
	claim         *kazoo.PartitionClaim // the claim, once held
	owned         *offsets.Partition    // the tracked offsets, once read
	sink          Sink                  // open while messages may be handed out
	stopWatch     chan struct{}         // ends the claim watch
	drainDeadline time.Time             // Offsets.ProcessingTimeout from the drain's start
	drainErr      error                 // the drain's timeout, reported with the final commit
	spcClosed     chan struct{}         // closed once the last partition consumer is closed
	expired       bool                  // pump found the session holding the claim gone

	// mayHoldNode: an owner node of this instance's session may remain for
	// the partition (a release or a clean-up that did not get through).
	// Written by run's goroutine before done; the manage loop reads it
	// after done and sweeps the node (see Sweep).
	mayHoldNode bool

	// handing is held while the worker hands messages out or takes its
	// messages in state consuming. A pause of the delivery gate that finds
	// it free takes back what a claim's buffer holds at once (see
	// takeBackOutsidePump), wherever else the worker is.
	handing sync.Mutex
	// takeBackFrom is the partition consuming hands out (nil outside
	// consuming), and takenBack the lowest offset the take-back outside
	// pump took (-1: none), which the pause's handling restarts below;
	// both guarded by handing.
	takeBackFrom *offsets.Partition
	takenBack    int64
	// unhanded holds, by offset, the messages the consumer's interceptors
	// ran on that never reached the application (see interceptOnce);
	// guarded by handing, or the worker's own while no pump runs.
	unhanded map[int64]*sarama.ConsumerMessage
}

// Start starts a worker for tp. prev, if not nil, is the partition's
// previous worker here, still stopping: the new one claims only once it
// is done. exited is told when the worker ends on its own (not stopped).
func Start(cfg Config, deps Deps, tp TopicPartition, prev *Worker, exited chan<- coord.Worker) *Worker {
	w := New(cfg, deps, tp)
	w.prev, w.exited = prev, exited
	go w.run()
	return w
}

// New returns a worker for tp that has not started.
func New(cfg Config, deps Deps, tp TopicPartition) *Worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Worker{
		cfg: cfg, deps: deps, tp: tp, ctx: ctx, cancel: cancel,
		inbox:   NewInbox(cancel),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
		claimed: make(chan struct{}),
		opened:  make(chan struct{}),
		started: time.Now(),

		takenBack: -1,
	}
	if deps.Log != nil {
		w.log = deps.Log.With("topic", tp.Topic, "partition", tp.Partition)
	} else {
		w.log = slog.New(slog.DiscardHandler)
	}
	return w
}

// Stop asks the worker to stop: after a drain and a final commit, or
// without them (abandon, which its predecessor, if any, gets too). It does
// not wait: see Done.
func (w *Worker) Stop(abandon bool) {
	w.stopOnce.Do(func() { close(w.stopped) })
	if abandon {
		w.inbox.Abandon()
		if w.prev != nil {
			// A predecessor still stopping is tracked by nobody but us,
			// and our done waits for its: nothing may be committed there
			// either.
			w.prev.Stop(true)
		}
	}
	w.inbox.Stop()
}

// lost tells the worker its claim is gone.
func (w *Worker) lost() { w.inbox.Lost() }

// ClaimEnded reports whether a worker that ended on its own did so because
// its claim ended (lost, or the session holding it gone) rather than
// because of an error. Read it after the worker's exit was received.
func (w *Worker) ClaimEnded() bool {
	return w.claimLost() || w.expired || w.inbox.Has(Abandon)
}

// claimLost reports whether the claim was seen to end (the epoch moved,
// the owner node deleted). The tracked partition keeps that record, for
// the committer and the worker alike.
func (w *Worker) claimLost() bool { return w.owned != nil && w.owned.Lost() }

// listenToGate makes a pause of the delivery gate one more message in
// the worker's inbox, for the worker's whole life, from a pause already
// in force on.
func (w *Worker) listenToGate() (stop func()) {
	if w.deps.Gate == nil {
		return func() {} // a test's worker without a fence
	}
	stop = w.deps.Gate.Listen(w.onGatePause)
	if w.deps.Gate.Paused() {
		w.inbox.Pause()
	}
	return stop
}

// run drives the worker through its states until done.
func (w *Worker) run() {
	defer func() {
		close(w.done)
		if w.mayHoldNode {
			w.deps.WakeSweep()
		}
	}()
	stopListening := w.listenToGate()
	if w.deps.Fetch != nil {
		w.openExpected = w.deps.Fetch.ExpectOpen()
	}
	st := Claiming
	for st != Done {
		e := w.runState(st)
		n := Next(st, e)
		if n != st {
			w.log.Debug("partition worker", "from", st, "event", e, "to", n)
			w.enter(n)
		}
		st = n
	}
	stopListening()
	if w.spcClosed != nil {
		<-w.spcClosed
	}
	select {
	case <-w.claimed:
	default:
		close(w.claimed) // never claimed: nobody waits for it any more
	}
	w.markOpened() // never opened: nobody waits for it any more
	w.cancel()
	select {
	case <-w.stopped:
	default:
		// Ended on its own (a permanent claim error, the claim lost, the
		// session gone): the manage loop decides whether to start it again.
		w.exitOnItsOwn()
	}
}

// runState does the work of state st and returns the event that ends it.
func (w *Worker) runState(st State) Event {
	switch st {
	case Claiming:
		return w.claimPartition()
	case Consuming:
		return w.consumePartition()
	case Draining:
		return w.drain()
	case Committing:
		return w.commitFinal()
	case Releasing:
		return w.release()
	}
	panic("partition worker: no work for state " + st.String())
}

// enter does what entering state st takes, whatever the event.
func (w *Worker) enter(st State) {
	if st != Consuming {
		w.endOpenExpected() // stopping: it will not open
	}
	switch st {
	case Draining:
		w.closeSink() // nothing more is handed out: the drain waits for marks
		w.drainDeadline = time.Now().Add(w.cfg.ProcessingTimeout)
	case Releasing:
		w.closeSink()
		if w.outbox != nil {
			w.outbox.Unregister() // drained, or taken back: none of ours is in it
		}
		if w.stopWatch != nil {
			close(w.stopWatch) // before the release: ours is not a loss
			w.stopWatch = nil
		}
		if w.owned != nil {
			// Not committed (an abandon, a loss, the session gone): what
			// was marked is delivered again by the next owner. After a
			// final commit, untracking it again is harmless.
			w.deps.Offsets.Drop(w.owned)
		}
	case Done:
		if w.claim != nil {
			w.deps.Metrics.Ended(w.tp)
		}
	}
}

// takeOr takes and handles the most urgent message in state st, or
// returns def if none is pending.
func (w *Worker) takeOr(st State, def Event) Event {
	if m, ok := w.inbox.Take(); ok {
		e, _, _ := w.handle(st, m, -1)
		return e
	}
	return def
}

// claimPartition is state claiming: wait for the predecessor, then claim.
func (w *Worker) claimPartition() Event {
	if w.prev != nil {
		select {
		case <-w.prev.done:
		case <-w.ctx.Done():
			// Our done must imply the predecessor's: the manage loop tracks
			// only us now. It is stopped already, so this wait is bounded.
			<-w.prev.done
			w.mayHoldNode = w.prev.mayHoldNode // nobody claimed over it
			return w.takeOr(Claiming, Stop)
		}
	}
	pc, err := w.deps.Claimer.Keep(w.ctx, w.tp.Topic, w.tp.Partition, func(e *claim.Error) {
		w.report(e)
	})
	if err != nil {
		if w.ctx.Err() != nil {
			if errors.Is(err, claim.ErrStoppedInDoubt) {
				w.cleanUpInDoubtClaim()
			} else if w.prev != nil && w.prev.mayHoldNode {
				w.mayHoldNode = true // maybe no attempt found the predecessor's node
			}
			return w.takeOr(Claiming, Stop)
		}
		w.report(err)        // a permanent claim error
		w.mayHoldNode = true // an earlier attempt may have applied
		return Failed
	}
	w.claim = pc
	w.log.Info("claimed", "epoch", pc.Epoch)
	w.deps.Metrics.Claimed(time.Since(w.started))
	close(w.claimed)
	return Finished
}

// drain is state draining: wait until every message handed out is marked,
// up to Offsets.ProcessingTimeout or until Close's caller stops waiting
// (Deps.DrainsCut), or until a message says no mark could be committed
// any more. It waits on its inbox, the tracker and the claim's reader at
// once.
func (w *Worker) drain() Event {
	if w.owned == nil {
		return w.takeOr(Draining, Finished)
	}
	deadline := time.NewTimer(time.Until(w.drainDeadline))
	defer deadline.Stop()
	for {
		wake := w.inbox.Wait()
		if m, ok := w.inbox.Take(); ok {
			if e, _, _ := w.handle(Draining, m, -1); Next(Draining, e) != Draining {
				return e
			}
			continue // a pause taken care of, or a stop while stopping
		}
		settled, changed := w.owned.Tracker.Settled()
		if settled {
			w.drainErr = nil
			return Finished
		}
		// While a claim's buffer holds messages the handler has yet to
		// read, the end of its reader takes them back: nobody can mark
		// them any more.
		var goneC <-chan struct{}
		if w.out != nil && len(w.out) > 0 {
			goneC = w.readerGone
		}
		select {
		case <-wake:
		case <-changed:
		case <-goneC:
			w.recallUnread()
		case <-deadline.C:
			return w.endDrainUnsettled(context.DeadlineExceeded)
		case <-w.deps.DrainsCut:
			return w.endDrainUnsettled(ErrDrainCutShort)
		}
	}
}

// ErrDrainCutShort is why a drain ended before its marks came when Close's
// caller stopped waiting (Deps.DrainsCut): see docs/shutdown.md.
var ErrDrainCutShort = errors.New("the caller of Close stopped waiting for marks")

// endDrainUnsettled ends the drain before every message handed out was
// marked, at its deadline or cut short (why): what the claim's buffer
// holds is taken back and the final commit stores what was marked. The
// error naming the outstanding offsets is reported with the final commit;
// it is nil when a mark raced the end.
func (w *Worker) endDrainUnsettled(why error) Event {
	if w.drainErr = w.owned.Tracker.Unsettled(why); w.drainErr != nil {
		w.recallAfterDrainTimeout()
	}
	return Finished
}

// commitFinal is state committing: commit what was marked, unless a
// message since the drain says the claim may no longer be ours.
func (w *Worker) commitFinal() Event {
	for {
		m, ok := w.inbox.Take()
		if !ok {
			break
		}
		if e, _, _ := w.handle(Committing, m, -1); Next(Committing, e) != Committing {
			return e
		}
	}
	if w.owned == nil {
		return Finished
	}
	err := w.deps.Offsets.FinalCommit(w.owned)
	var conflict *offsets.ConflictError
	if errors.As(err, &conflict) {
		err = nil // commit reported it already
	}
	if err = errors.Join(w.drainErr, err); err != nil {
		w.report(err)
	}
	if w.owned.Lost() {
		return Loss // the epoch moved during the final commit
	}
	return Finished
}

// closeSink ends the hand-over: nothing more is sent to the sink's channel.
func (w *Worker) closeSink() {
	if w.sink != nil {
		w.sink.Close(w)
		w.sink = nil
	}
}

func (w *Worker) exitOnItsOwn() {
	select {
	case w.exited <- w:
	case <-w.stopped:
	}
}
