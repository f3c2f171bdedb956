package consumergroup

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

// topicPartition names one partition of one topic.
type topicPartition struct {
	Topic     string
	Partition int32
}

// partitionWorker owns one assigned partition for as long as it stays
// assigned here: it claims it, consumes it, and on stop drains, commits and
// releases it. Its life is the state machine of worker_lifecycle.go, run by
// one goroutine (run); everybody else talks to it through its events (stop,
// seek, lost), and it waits for nothing else.
type partitionWorker struct {
	cg     *ConsumerGroup
	tp     topicPartition
	prev   *partitionWorker // a predecessor for the same partition still stopping
	log    *slog.Logger
	ctx    context.Context // ended by stop, abandon, loss and expiry
	cancel context.CancelFunc
	ev     *workerEvents
	exited chan<- coord.Worker // told when the worker ends on its own

	stopped  chan struct{} // closed by stop: the manage loop no longer waits for an exit
	stopOnce sync.Once

	done    chan struct{} // closed when run returns
	claimed chan struct{} // closed once the partition is claimed (or run returns first)
	started time.Time     // when the worker started: the claim wait's origin
	hwm     atomic.Int64  // the partition's high-water mark, as its fetch Sources set it

	// out receives the worker's messages: set once the partition is claimed,
	// by the group's claimSink (Messages(), or the claim's own channel).
	out chan *sarama.ConsumerMessage
	// readerGone, when not nil, is closed once nobody reads out any more
	// (a handler's ConsumeClaim returned): set with out.
	readerGone <-chan struct{}

	// What the states pass on to each other; run's goroutine only.
	claim         *kazoo.PartitionClaim // the claim, once held
	owned         *offsets.Partition    // the tracked offsets, once read
	sink          claimSink             // open while messages may be handed out
	stopWatch     chan struct{}         // ends the claim watch
	drainDeadline time.Time             // Offsets.ProcessingTimeout from the drain's start
	drainErr      error                 // the drain's timeout, reported with the final commit
	spcClosed     chan struct{}         // closed once the last partition consumer is closed

	// mayHoldNode: an owner node of this instance's session may remain for
	// the partition (a release or a clean-up that did not get through).
	// Written by run's goroutine before done; the manage loop reads it
	// after done and sweeps the node (see sweepOwnerNode).
	mayHoldNode bool

	// handing is held while pump hands messages out. A pause of the
	// delivery gate that finds it free takes back what a claim's buffer
	// holds at once (see takeBackOutsidePump), wherever else the worker is.
	handing sync.Mutex
	// takenBack is the lowest offset taken back that way (-1: none), which
	// the next pump restarts below; guarded by handing.
	takenBack int64
}

func (cg *ConsumerGroup) startWorker(tp topicPartition, prev *partitionWorker, exited chan<- coord.Worker) *partitionWorker {
	w := newWorker(cg, tp)
	w.prev, w.exited = prev, exited
	go w.run()
	return w
}

func newWorker(cg *ConsumerGroup, tp topicPartition) *partitionWorker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &partitionWorker{
		cg: cg, tp: tp, ctx: ctx, cancel: cancel,
		ev:      newWorkerEvents(cancel),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
		claimed: make(chan struct{}),
		started: time.Now(),

		takenBack: -1,
	}
	if cg != nil && cg.log != nil {
		w.log = cg.log.With("topic", tp.Topic, "partition", tp.Partition)
	} else {
		w.log = slog.New(slog.DiscardHandler)
	}
	return w
}

// stop asks the worker to stop: after a drain and a final commit, or
// without them (abandon, which its predecessor, if any, gets too). It does
// not wait: see done.
func (w *partitionWorker) stop(abandon bool) {
	w.stopOnce.Do(func() { close(w.stopped) })
	if abandon {
		w.ev.raise(eventAbandon)
		if w.prev != nil {
			// A predecessor still stopping is tracked by nobody but us,
			// and our done waits for its: nothing may be committed there
			// either.
			w.prev.stop(true)
		}
	}
	w.ev.raise(eventStop)
}

// seek tells the worker to resume at offset (negative: Offsets.Initial).
func (w *partitionWorker) seek(offset int64) { w.ev.raiseSeek(offset) }

// lost tells the worker its claim is gone.
func (w *partitionWorker) lost() { w.ev.raise(eventLoss) }

// claimEnded reports whether a worker that ended on its own did so because
// its claim ended (lost, or the session holding it gone) rather than
// because of an error. Read it after the worker's exit was received.
func (w *partitionWorker) claimEnded() bool {
	return w.ev.has(eventLoss) || w.ev.has(eventExpiry) || w.ev.has(eventAbandon)
}

// run drives the worker through its states until done.
func (w *partitionWorker) run() {
	defer func() {
		close(w.done)
		if w.mayHoldNode {
			w.cg.wakeForSweep()
		}
	}()
	st := stateClaiming
	for st != stateDone {
		e := w.runState(st)
		n := next(st, e)
		if n != st {
			w.log.Debug("partition worker", "from", st, "event", e, "to", n)
			w.enter(n)
		}
		st = n
	}
	if w.spcClosed != nil {
		<-w.spcClosed
	}
	select {
	case <-w.claimed:
	default:
		close(w.claimed) // never claimed: nobody waits for it any more
	}
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
func (w *partitionWorker) runState(st workerState) workerEvent {
	switch st {
	case stateClaiming:
		return w.claimPartition()
	case stateConsuming:
		return w.consumePartition()
	case stateDraining:
		return w.drain()
	case stateCommitting:
		return w.commitFinal()
	case stateReleasing:
		return w.release()
	}
	panic("partition worker: no work for state " + st.String())
}

// enter does what entering state st takes, whatever the event.
func (w *partitionWorker) enter(st workerState) {
	switch st {
	case stateDraining:
		w.closeSink() // nothing more is handed out: the drain waits for marks
		w.drainDeadline = time.Now().Add(w.cg.config.Offsets.ProcessingTimeout)
	case stateReleasing:
		w.closeSink()
		if w.stopWatch != nil {
			close(w.stopWatch) // before the release: ours is not a loss
			w.stopWatch = nil
		}
		if w.owned != nil {
			// Not committed (an abandon, a loss, the session gone): what
			// was marked is delivered again by the next owner. After a
			// final commit, untracking it again is harmless.
			w.cg.offsetManager.Drop(w.owned)
		}
	case stateDone:
		if w.claim != nil {
			w.cg.met().dropLag(w.tp)
		}
	}
}

// takeOr takes the most urgent pending event, or returns def if none is.
func (w *partitionWorker) takeOr(def workerEvent) workerEvent {
	if e, _, ok := w.ev.take(); ok {
		return e
	}
	return def
}

// claimPartition is state claiming: wait for the predecessor, then claim.
func (w *partitionWorker) claimPartition() workerEvent {
	if w.prev != nil {
		select {
		case <-w.prev.done:
		case <-w.ctx.Done():
			// Our done must imply the predecessor's: the manage loop tracks
			// only us now. It is stopped already, so this wait is bounded.
			<-w.prev.done
			w.mayHoldNode = w.prev.mayHoldNode // nobody claimed over it
			return w.takeOr(eventStop)
		}
	}
	pc, err := w.cg.claimer.Keep(w.ctx, w.tp.Topic, w.tp.Partition, func(e *claim.Error) {
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, e)
	})
	if err != nil {
		if w.ctx.Err() != nil {
			if errors.Is(err, claim.ErrStoppedInDoubt) {
				w.cleanUpInDoubtClaim()
			} else if w.prev != nil && w.prev.mayHoldNode {
				w.mayHoldNode = true // maybe no attempt found the predecessor's node
			}
			return w.takeOr(eventStop)
		}
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, err) // a permanent claim error
		w.mayHoldNode = true                                  // an earlier attempt may have applied
		return eventFailed
	}
	w.claim = pc
	w.log.Info("claimed", "epoch", pc.Epoch)
	w.cg.met().claims.Inc(1)
	w.cg.met().claimWait.Update(ms(time.Since(w.started)))
	close(w.claimed)
	return eventFinished
}

// drain is state draining: wait until every message handed out is marked,
// up to Offsets.ProcessingTimeout, or until an event says no mark could be
// committed any more.
func (w *partitionWorker) drain() workerEvent {
	if w.owned == nil {
		return w.takeOr(eventFinished)
	}
	if w.out != nil && cap(w.out) > 0 {
		// A claim's buffer may still hold messages: a pause takes them back.
		stopListening := w.cg.gate.Listen(w.ev.raisePause)
		defer stopListening()
		if w.cg.gate.Paused() { // paused before we listened
			w.ev.raisePause()
		}
	}
	for {
		wake := w.ev.wait()
		if e, _, ok := w.ev.take(); ok {
			switch {
			case e == eventPause:
				w.recallWhileDraining()
			case next(stateDraining, e) != stateDraining:
				w.recallBeforeRelease(w.owned) // nothing the buffer holds counts any more
				return e
			}
			continue // a pause taken care of, or a stop while stopping
		}
		// While a claim's buffer holds messages the handler has yet to
		// read, the end of its reader takes them back: nobody can mark
		// them any more.
		var goneC <-chan struct{}
		if w.out != nil && len(w.out) > 0 {
			goneC = w.readerGone
		}
		ctx, cancel := context.WithDeadline(context.Background(), w.drainDeadline)
		go func() {
			select {
			case <-wake:
				cancel()
			case <-goneC:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := w.owned.Tracker.Drain(ctx)
		cancel()
		if errors.Is(err, context.Canceled) {
			if goneC != nil && isClosed(goneC) {
				w.recallUnread()
			}
			continue // woken by an event or the reader's end: look again
		}
		if err != nil {
			w.recallAfterDrainTimeout()
		}
		w.drainErr = err // nil, or the timeout naming the outstanding offsets
		return eventFinished
	}
}

// commitFinal is state committing: commit what was marked, unless an event
// since the drain says the claim may no longer be ours.
func (w *partitionWorker) commitFinal() workerEvent {
	for {
		e, _, ok := w.ev.take()
		if !ok {
			break
		}
		if next(stateCommitting, e) != stateCommitting {
			return e
		}
	}
	if w.owned == nil {
		return eventFinished
	}
	err := w.cg.offsetManager.FinalCommit(w.owned)
	var conflict *OffsetConflictError
	if errors.As(err, &conflict) {
		err = nil // commit reported it already
	}
	if err = errors.Join(w.drainErr, err); err != nil {
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, err)
	}
	if w.owned.Lost() {
		w.ev.raise(eventLoss) // the epoch moved during the final commit
		return w.takeOr(eventLoss)
	}
	return eventFinished
}

// closeSink ends the hand-over: nothing more is sent to the sink's channel.
func (w *partitionWorker) closeSink() {
	if w.sink != nil {
		w.sink.close(w)
		w.sink = nil
	}
}

func (w *partitionWorker) exitOnItsOwn() {
	select {
	case w.exited <- w:
	case <-w.stopped:
	}
}
