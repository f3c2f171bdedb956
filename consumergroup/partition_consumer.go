package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/kazoo"
)

// topicPartition names one partition of one topic.
type topicPartition struct {
	Topic     string
	Partition int32
}

// partitionWorker owns one assigned partition for as long as it stays
// assigned here: it claims it, consumes it, and on stop drains, commits and
// releases it. One goroutine (run) owns its state; the manage loop stops it
// through cancel, the offset manager talks to it through seekC and lostC.
type partitionWorker struct {
	cg     *ConsumerGroup
	tp     topicPartition
	prev   *partitionWorker // a predecessor for the same partition still stopping
	ctx    context.Context
	cancel context.CancelFunc
	exited chan<- *partitionWorker // told when the worker ends on its own

	// abandon: stop without the final commit (the session expired or is
	// cut off, or the claim was lost). abandonC is closed with it by stop.
	abandon     atomic.Bool
	abandonC    chan struct{}
	abandonOnce sync.Once
	// claimLost: the epoch moved; there is nothing to release.
	claimLost atomic.Bool

	pending  atomic.Bool   // set after cancel, lostC or seekC fired: pump checks them
	seekC    chan int64    // the offset manager adopted a stored offset: resume there
	lostC    chan struct{} // the offset manager saw the epoch move: stop now
	lostOnce sync.Once
	pcClosed chan struct{} // closed once the last partition consumer is closed (run's goroutine sets it)
	done     chan struct{} // closed when run returns
	claimed  chan struct{} // closed once the partition is claimed (or run returns first)
	started  time.Time     // when the worker started: the claim wait's origin
	hwm      atomic.Int64  // the partition's high-water mark, as last seen by pump

	// handOver is cancelled by seek and lost, so a hand-over blocked on a
	// reader (or on the fence) gives up at once instead of handing out a
	// message of a position or a claim that is gone. pump makes a new one
	// each time it starts.
	handOverMu     sync.Mutex
	handOverCancel context.CancelFunc
}

func (cg *ConsumerGroup) startWorker(tp topicPartition, prev *partitionWorker, exited chan<- *partitionWorker) *partitionWorker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &partitionWorker{
		cg: cg, tp: tp, prev: prev, ctx: ctx, cancel: cancel, exited: exited,
		seekC:    make(chan int64, 1),
		lostC:    make(chan struct{}),
		abandonC: make(chan struct{}),
		done:     make(chan struct{}),
		claimed:  make(chan struct{}),
		started:  time.Now(),
	}
	go w.run()
	return w
}

// stop asks the worker to stop; abandon skips the final commit and release.
// It does not wait: see done.
func (w *partitionWorker) stop(abandon bool) {
	if abandon {
		w.abandon.Store(true)
		w.abandonOnce.Do(func() { close(w.abandonC) })
	}
	w.cancel()
	w.pending.Store(true)
}

// seek tells the worker to resume at offset (negative: Offsets.Initial).
func (w *partitionWorker) seek(offset int64) {
	select {
	case <-w.seekC: // a newer target replaces an unread one
	default:
	}
	w.seekC <- offset
	w.pending.Store(true)
	w.interruptHandOver()
}

// lost tells the worker its claim is gone.
func (w *partitionWorker) lost() {
	w.lostOnce.Do(func() { close(w.lostC) })
	w.pending.Store(true)
	w.interruptHandOver()
}

// drainInterrupted returns a channel closed as soon as waiting for marks
// can no longer lead to a commit: the claim is lost, the worker is
// abandoned (the session expired), or the offset manager asked for a seek
// (an offset conflict, after which marks are refused). Its goroutine ends
// when done is closed.
func (w *partitionWorker) drainInterrupted(done <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-w.lostC:
		case <-w.abandonC:
		case <-w.seekC: // nobody else reads it once pump has returned
		case <-done:
			return
		}
		close(out)
	}()
	return out
}

// newHandOver returns the context for pump's hand-overs, replacing the
// previous one. An interruption that came before it is seen through the
// pending flag, which pump checks before every hand-over.
func (w *partitionWorker) newHandOver() context.Context {
	ctx, cancel := context.WithCancel(w.ctx)
	w.handOverMu.Lock()
	if w.handOverCancel != nil {
		w.handOverCancel()
	}
	w.handOverCancel = cancel
	w.handOverMu.Unlock()
	return ctx
}

func (w *partitionWorker) interruptHandOver() {
	w.handOverMu.Lock()
	if w.handOverCancel != nil {
		w.handOverCancel()
	}
	w.handOverMu.Unlock()
}

func (w *partitionWorker) run() {
	defer close(w.done)
	defer func() {
		select {
		case <-w.claimed:
		default:
			close(w.claimed) // never claimed: nobody waits for it any more
		}
	}()
	defer func() {
		if w.pcClosed != nil {
			<-w.pcClosed
		}
	}()
	defer func() {
		if w.ctx.Err() == nil {
			// Ended on its own (permanent claim error, claim lost, session
			// replaced): the manage loop decides whether to start it again.
			w.exitOnItsOwn()
		}
		w.cancel()
	}()
	log := w.cg.log.With("topic", w.tp.Topic, "partition", w.tp.Partition)

	if w.prev != nil {
		select {
		case <-w.prev.done:
		case <-w.ctx.Done():
			// Our done must imply the predecessor's: the manage loop tracks
			// only us now. It is stopped already, so this wait is bounded.
			<-w.prev.done
			return
		}
	}

	pc, err := w.cg.claimer.Keep(w.ctx, w.tp.Topic, w.tp.Partition, func(e *claim.Error) {
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, e)
	})
	if err != nil {
		if w.ctx.Err() == nil { // a permanent claim error
			w.cg.reportPartition(w.tp.Topic, w.tp.Partition, err)
		}
		return
	}
	log.Info("claimed", "epoch", pc.Epoch)
	w.cg.met().claims.Inc(1)
	w.cg.met().claimWait.Update(ms(time.Since(w.started)))
	close(w.claimed)
	defer w.cg.met().dropLag(w.tp)

	defer func() {
		// Release unless the claim is provably gone: only a moved epoch or
		// a replaced (or closed) session proves that. A fenced instance
		// whose session survives still owns the node, and must delete it.
		sess, _ := w.cg.kazoo.Session()
		switch {
		case sess.Status == kazoo.SessionClosed || sess.ID != pc.SessionID:
			log.Info("stopped; the session holding the claim is gone, nothing to release")
		case w.claimLost.Load():
			// The epoch moved, but the owner node may still be ours (a
			// reset bumps only the epoch): nobody else could delete it, so
			// delete it unless the epoch moves again meanwhile. No newer
			// claim of ours exists: a successor waits for this worker's
			// done. Not abandoned on a timeout, for that reason: the call
			// ends when ZooKeeper answers or the session closes.
			if err := w.cg.instance.ReleaseAfterLoss(pc); err != nil {
				w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("release after the claim was lost: %w", err))
				return
			}
			log.Info("stopped; the claim was lost, its owner node is gone")
		default:
			if err := w.cg.claimer.Release(context.Background(), pc); err != nil {
				w.cg.reportPartition(w.tp.Topic, w.tp.Partition, err)
				return
			}
			log.Info("released")
		}
	}()

	next, version, err := w.readOffset()
	if err != nil {
		return // ctx ended
	}
	owned := w.cg.offsetManager.adopt(w.tp, pc, next, version, w)
	stopWatch := make(chan struct{})
	defer close(stopWatch) // before the release above: ours is not a loss
	go w.watchClaim(pc, owned, stopWatch)
	w.consume(owned, next)

	if paused, _, _ := w.cg.gate.state(); paused {
		// Fenced off from ZooKeeper: waiting for marks and a final commit
		// would only hold up a rebalance or Close (what was marked is
		// delivered again). The release is still tried, within the session
		// timeout: if the session survives, the owner node is still ours.
		log.Warn("stopping while fenced off from ZooKeeper: no final commit")
		w.abandon.Store(true)
	}
	if w.abandon.Load() {
		w.cg.offsetManager.drop(w.tp, owned)
		log.Info("dropped without a final commit")
		return
	}
	if err := w.cg.offsetManager.finalize(owned, w.cg.config.Offsets.ProcessingTimeout); err != nil {
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, err)
	}
	if owned.lost.Load() {
		w.claimLost.Store(true) // the epoch moved during the final commit
	}
}

// claimEnded reports whether a worker that ended on its own did so because
// its claim ended (lost, or the session holding it replaced) rather than
// because of an error. Read it after the worker's exit was received.
func (w *partitionWorker) claimEnded() bool {
	return w.abandon.Load() || w.claimLost.Load()
}

func (w *partitionWorker) exitOnItsOwn() {
	select {
	case w.exited <- w:
	case <-w.ctx.Done():
	}
}

// readOffset reads the committed offset, retrying (and reporting) errors
// every Claim.RetryCooldown: a corrupt offset node is reported and the
// partition is held, never consumed from a guessed position.
func (w *partitionWorker) readOffset() (next int64, version int32, err error) {
	for {
		next, version, err = w.cg.group.FetchOffsetVersion(w.tp.Topic, w.tp.Partition)
		if err == nil {
			return next, version, nil
		}
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("read committed offset: %w", err))
		if !w.cooldown() {
			return 0, 0, context.Canceled
		}
	}
}

// cooldown waits Claim.RetryCooldown before a retry. It returns false,
// early, when the worker is stopped or its claim is lost (then marking it
// abandoned, with nothing to release).
func (w *partitionWorker) cooldown() bool {
	return w.wait(w.cg.config.Claim.RetryCooldown)
}

// consume fetches from next (negative: Offsets.Initial) and delivers until
// the worker is stopped or its claim is lost, following seeks.
func (w *partitionWorker) consume(owned *ownedOffsets, next int64) {
	start := next
	for {
		if start < 0 { // nothing stored: start at Offsets.Initial, resolved
			var ok bool
			if start, ok = w.startAtInitial(owned); !ok {
				return
			}
		}
		// The partition consumer starts after the directly fetched prefix;
		// start itself moves only once the prefix is handed to pump, so a
		// failed open fetches the prefix again instead of skipping it.
		prefix := w.fastStart(start)
		from := start
		if len(prefix) > 0 {
			from = prefix[len(prefix)-1].Offset + 1
		}
		spc, err := w.open(owned, from)
		if err != nil {
			if w.ctx.Err() != nil {
				return
			}
			w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("start partition consumer at %d: %w", from, err))
			if !w.cooldown() {
				return
			}
			continue
		}
		resume, stop := w.pump(owned, spc, prefix, start)
		if stop {
			// sarama closes a partition consumer only after its broker's
			// fetch in flight returns (up to Consumer.MaxWaitTime): close it
			// beside the final commit and release, not before them. run
			// waits for it before done, so a successor can consume again.
			w.pcClosed = make(chan struct{})
			go func() {
				defer close(w.pcClosed)
				closePartitionConsumer(spc)
			}()
			return
		}
		closePartitionConsumer(spc)
		start = resume
	}
}

// closePartitionConsumer closes spc and drains both of its channels at
// once: sarama blocks on a full errors channel before it closes messages.
func closePartitionConsumer(spc sarama.PartitionConsumer) {
	spc.AsyncClose()
	msgs, errs := spc.Messages(), spc.Errors()
	for msgs != nil || errs != nil {
		select {
		case _, ok := <-msgs:
			if !ok {
				msgs = nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		}
	}
}

// open starts the sarama partition consumer at start. A stored offset out of
// the log's range is reported and replaced by Offsets.Initial, as upstream
// does, resolved to a real offset: the new position is committed at once
// (see startAtInitial), and later marks commit from it.
func (w *partitionWorker) open(owned *ownedOffsets, start int64) (sarama.PartitionConsumer, error) {
	if start < 0 {
		start = w.cg.config.Offsets.Initial
	}
	spc, err := w.cg.consumer.ConsumePartition(w.tp.Topic, w.tp.Partition, start)
	if errors.Is(err, sarama.ErrOffsetOutOfRange) {
		initial := w.cg.config.Offsets.Initial
		resolved, rerr := w.resolveInitial()
		if rerr != nil {
			return nil, fmt.Errorf("offset %d is out of range (%w); resolve %s (Offsets.Initial): %w", start, err, offsetName(initial), rerr)
		}
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition,
			fmt.Errorf("offset %d is out of range; restarting at %d, %s (Offsets.Initial): %w", start, resolved, offsetName(initial), err))
		owned.restartUncommitted(resolved)
		w.commitStart(owned)
		spc, err = w.cg.consumer.ConsumePartition(w.tp.Topic, w.tp.Partition, resolved)
	}
	return spc, err
}

func offsetName(o int64) string {
	switch o {
	case sarama.OffsetOldest:
		return "the oldest offset"
	case sarama.OffsetNewest:
		return "the newest offset"
	}
	return fmt.Sprint(o)
}

// fastStart returns the first batch at start through a direct fetch (see
// firstFetch), or nothing when that does not apply or fails: the partition
// consumer then starts at start as usual.
func (w *partitionWorker) fastStart(start int64) []*sarama.ConsumerMessage {
	msgs, err := w.cg.fetcher.fetch(w.ctx, w.tp.Topic, w.tp.Partition, start)
	if err != nil {
		w.cg.log.Debug("direct first fetch failed; using the partition consumer", "topic", w.tp.Topic,
			"partition", w.tp.Partition, "offset", start, "err", err)
		return nil
	}
	return msgs
}

// pump hands prefix, then messages from spc, to Messages() until something
// ends it. It returns where to resume and whether to stop instead.
//
// While messages are ready it takes them without a full select; the control
// channels are read whenever the pending flag says one of them fired, and
// in the blocking select when no message is ready.
func (w *partitionWorker) pump(owned *ownedOffsets, spc sarama.PartitionConsumer, prefix []*sarama.ConsumerMessage, start int64) (resume int64, stop bool) {
	last := int64(-1)
	msgs := spc.Messages()
	valid := func() bool { return w.cg.kazoo.SessionID() == owned.claim.SessionID }
	handOver := w.newHandOver()
	var held *sarama.ConsumerMessage // not handed over yet: offered again first
	for {
		if w.pending.Load() {
			if resume, stop, ok := w.interrupted(owned); ok {
				return resume, stop
			}
		}
		var m *sarama.ConsumerMessage
		var open bool
		if held != nil {
			m, held = held, nil
		} else if len(prefix) > 0 {
			m, prefix, open = prefix[0], prefix[1:], true
		} else {
			select {
			case m, open = <-msgs:
			default:
				select {
				case <-w.ctx.Done():
					return 0, true
				case <-w.lostC:
					w.abandon.Store(true)
					w.claimLost.Store(true)
					return 0, true
				case to := <-w.seekC:
					owned.restart(to)
					return to, false
				case err, ok := <-spc.Errors():
					if ok && err != nil {
						w.cg.report(err)
					}
					continue
				case m, open = <-msgs:
				}
			}
			if !open { // sarama gave up on the partition (e.g. out of range): reopen
				if last >= 0 {
					return last + 1, false
				}
				return start, false
			}
		}
		w.hwm.Store(spc.HighWaterMarkOffset())
		delivered, stop := w.deliver(handOver, owned, m, valid)
		switch {
		case stop:
			return 0, true
		case delivered:
			last = m.Offset
		default:
			// The hand-over was cut short. A stop, loss or seek is visible
			// on its channel before it cancels the hand-over: act on it.
			// Otherwise the cancel was meant for an earlier pump (a seek it
			// took from seekC itself): m was not handed over and must not be
			// skipped, or a later mark would commit past it.
			if resume, stop, ok := w.interrupted(owned); ok {
				return resume, stop
			}
			handOver = w.newHandOver()
			held = m
		}
	}
}

// interrupted handles a pending stop, claim loss or seek without waiting;
// ok says whether one was pending.
func (w *partitionWorker) interrupted(owned *ownedOffsets) (resume int64, stop, ok bool) {
	w.pending.Store(false)
	select {
	case <-w.ctx.Done():
		return 0, true, true
	case <-w.lostC:
		w.abandon.Store(true)
		w.claimLost.Store(true)
		return 0, true, true
	case to := <-w.seekC:
		owned.restart(to)
		return to, false, true
	default:
		return 0, false, false
	}
}

// deliver hands m to the application, waiting while the instance is fenced.
// It stops the worker (stop) when the session holding the claim is gone:
// someone else may own the partition by now.
// ctx is pump's hand-over context: a seek or a loss ends the wait.
func (w *partitionWorker) deliver(ctx context.Context, owned *ownedOffsets, m *sarama.ConsumerMessage, valid func() bool) (delivered, stop bool) {
	owned.offer(m.Offset)
	owned.redelivery.offered(m)
	// valid (the claim's session is the current one) is checked before the
	// hand-over and again after every pause.
	delivered, stale := w.cg.gate.sendIf(ctx, w.cg.messages, m, valid)
	if stale {
		w.abandon.Store(true)
		return false, true
	}
	if !delivered {
		return false, false // stopped, seeking or lost while waiting; pump sees why
	}
	owned.delivered(m.Offset)
	return true, false
}
