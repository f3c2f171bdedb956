package consumergroup

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
)

// consumePartition is state consuming: read and track the committed offset,
// open the hand-over, then fetch and hand messages out, following seeks,
// until an event ends it.
func (w *partitionWorker) consumePartition() workerEvent {
	stored, err := w.readOffset()
	if err != nil {
		return w.takeOr(eventStop) // the worker's context ended: an event says why
	}
	owned := w.cg.offsetManager.Adopt(offsets.TopicPartition(w.tp), w.claim, stored, w)
	w.owned = owned
	w.stopWatch = make(chan struct{})
	go w.watchClaim(w.claim, owned, w.stopWatch)
	w.alignStores(owned, stored)
	sink := w.cg.claimSink()
	if w.out = sink.open(w, owned, stored.Start()); w.out == nil {
		return w.endConsuming(owned) // nothing will be handed out after all
	}
	w.sink = sink
	return w.consume(owned, stored.Start())
}

// readOffset reads the committed offsets from the stores in use, retrying
// (and reporting) errors every Claim.RetryCooldown: a corrupt offset node,
// or a Kafka coordinator that does not answer, is reported and the
// partition is held, never consumed from a guessed position.
func (w *partitionWorker) readOffset() (offsets.Stored, error) {
	for {
		stored, err := w.cg.offsetManager.Store().Read(offsets.TopicPartition(w.tp))
		if err == nil {
			return stored, nil
		}
		if errors.Is(err, errGroupClosing) {
			w.log.Debug("closing: stopped waiting for the committed offset", "err", err)
		} else {
			w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("read committed offset: %w", err))
		}
		if !w.cooldown() {
			return stored, w.ctx.Err()
		}
	}
}

// cooldown waits Claim.RetryCooldown before a retry. It returns false,
// early, when the worker's context ends (stop, abandon, loss, expiry).
func (w *partitionWorker) cooldown() bool {
	return w.wait(w.cg.config.Claim.RetryCooldown)
}

// await waits for ready. It returns false, early, when the worker's context
// ends (stop, abandon, loss, expiry).
func (w *partitionWorker) await(ready <-chan struct{}) bool {
	select {
	case <-ready:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// consume fetches from next (negative: Offsets.Initial) and delivers until
// an event other than a seek ends it, which it returns; a seek restarts
// the fetch at its target.
func (w *partitionWorker) consume(owned *offsets.Partition, next int64) workerEvent {
	// A pause reaches the worker as an event all through consuming; pump
	// takes back what a claim's buffer holds when it takes the event. Away
	// from pump (opening a partition consumer, a cool-down, a start
	// commit), the pause itself takes it back (see takeBackOutsidePump).
	stopListening := w.cg.gate.Listen(w.onPause(owned))
	defer stopListening()
	fetcher := w.cg.fetch.Partition(w.ctx, w.tp.Topic, w.tp.Partition, &w.hwm, w.onOutOfRange(owned))
	start := next
	for {
		if start < 0 { // nothing stored: start at Offsets.Initial, resolved
			var ok bool
			if start, ok = w.startAtInitial(owned); !ok {
				return w.endConsuming(owned)
			}
		}
		src, err := fetcher.Open(start)
		if err != nil {
			if w.ctx.Err() != nil || errors.Is(err, errGroupClosing) || errors.Is(err, fetch.ErrClosing) {
				return w.endConsuming(owned)
			}
			if errors.Is(err, errSeekPending) {
				// The offset stored underneath wins: take the seek.
				if e, resume, ended, ok := w.takeWhileConsuming(owned, start); ok {
					if ended {
						return e
					}
					start = resume
					continue
				}
			}
			w.cg.reportPartition(w.tp.Topic, w.tp.Partition, fmt.Errorf("start partition consumer at %d: %w", start, err))
			if !w.cooldown() {
				return w.endConsuming(owned)
			}
			continue
		}
		w.handing.Lock()
		if to, restart := w.restartAfterTakeBack(owned, start); restart {
			w.handing.Unlock()
			src.Close()
			start = to
			continue
		}
		resume, end, ended := w.pump(owned, src, start)
		w.handing.Unlock()
		if !ended && w.cg.gate.Paused() {
			// A pause that came as pump returned found it busy, and pump
			// did not take it: take back here. (Ended, the drain or the
			// release takes back what is left.)
			w.takeBackOutsidePump(owned)
		}
		if ended {
			// sarama closes a partition consumer only after its broker's
			// fetch in flight returns (up to Consumer.MaxWaitTime): close it
			// beside the drain, the final commit and the release, not before
			// them. run waits for it before done, so a successor can
			// consume again.
			w.spcClosed = make(chan struct{})
			go func() {
				defer close(w.spcClosed)
				src.Close()
			}()
			return end
		}
		src.Close() // a failed source: the next Open reads through sarama's partition consumer
		start = resume
	}
}

// endConsuming returns the event that ends consuming once nothing more
// will be handed out: the one raised (stop, abandon, loss or expiry; seeks
// before it are applied), or a stop when none was.
func (w *partitionWorker) endConsuming(owned *offsets.Partition) workerEvent {
	for {
		e, _, ended, ok := w.takeWhileConsuming(owned, -1)
		if !ok || ended {
			return e
		}
	}
}

// takeWhileConsuming takes the most urgent pending event in state
// consuming. A seek restarts the partition's offsets at its target (resume
// there: ended false, resume the target), and so does a pause that took messages back from a
// claim's buffer (restarting at the marked offset; a pause that took
// nothing back changes nothing); any other event ends consuming (ended), a
// stop while the instance is fenced off from ZooKeeper as an abandon. ok
// is false when no event was pending; start is where pump started.
func (w *partitionWorker) takeWhileConsuming(owned *offsets.Partition, start int64) (e workerEvent, resume int64, ended, ok bool) {
	e, to, ok := w.ev.take()
	for ok && e == eventPause {
		// Delivery paused: take back what a claim's buffer holds. The next
		// hand-over waits for the gate to open.
		if to, restarted := w.recallOnPause(owned, start); restarted {
			return eventSeek, to, false, true
		}
		e, to, ok = w.ev.take()
	}
	switch {
	case !ok:
		return eventStop, 0, true, false
	case e == eventSeek:
		w.recall() // from the old position
		owned.Restart(to)
		return e, to, false, true
	case e == eventStop:
		if w.cg.gate.Paused() {
			// Waiting for marks and a final commit would only hold up a
			// rebalance or Close (what was marked is delivered again). The
			// release is still tried: if the session survives, the owner
			// node is still ours.
			w.log.Warn("stopping while fenced off from ZooKeeper: no final commit")
			w.recallBeforeRelease(owned)
			return eventAbandon, 0, true, true
		}
		return e, 0, true, true // a clean stop: the handler reads what the buffer holds
	}
	w.recallBeforeRelease(owned) // the claim may no longer be ours
	return e, 0, true, true
}

// onOutOfRange handles a stored offset out of the log's range as upstream
// does: it is reported and replaced by Offsets.Initial, resolved to a real
// offset, which is committed at once (see startAtInitial); later marks
// commit from it. It returns where the partition consumer opens instead.
func (w *partitionWorker) onOutOfRange(owned *offsets.Partition) fetch.OutOfRangeFunc {
	return func(start int64, err error) (int64, error) {
		initial := w.cg.config.Offsets.Initial
		resolved, rerr := w.resolveInitial()
		if rerr != nil {
			return 0, fmt.Errorf("offset %d is out of range (%w); resolve %s (Offsets.Initial): %w", start, err, offsetName(initial), rerr)
		}
		if resolved < start {
			// Below the stored offset (the log was truncated or the topic
			// re-created): a lower offset is stored only as a reset is,
			// with an epoch bump that ends this claim; the worker then
			// claims again and reads it.
			if applies, rerr := w.cg.offsetManager.RewindAsReset(owned, resolved); applies {
				if rerr != nil {
					return 0, rerr
				}
				w.cg.reportPartition(w.tp.Topic, w.tp.Partition,
					fmt.Errorf("offset %d is out of range; reset to %d, %s (Offsets.Initial), ending the claim: %w", start, resolved, offsetName(initial), err))
				return 0, errClaimEndedByRewind
			}
		}
		w.cg.reportPartition(w.tp.Topic, w.tp.Partition,
			fmt.Errorf("offset %d is out of range; restarting at %d, %s (Offsets.Initial): %w", start, resolved, offsetName(initial), err))
		owned.RestartUncommitted(resolved)
		if !w.commitStart(owned) {
			return 0, cmp.Or(w.ctx.Err(), errStartNotStored)
		}
		return resolved, nil
	}
}

// errStartNotStored: the claim was found lost while the new start was
// being committed; the loss event follows.
var errStartNotStored = errors.New("consumergroup: the claim ended before the new start was stored")

// errClaimEndedByRewind: open stored an offset below the stored one as a
// reset, which ended the claim; the loss event follows.
var errClaimEndedByRewind = errors.New("consumergroup: the claim ended with the rewind")

func offsetName(o int64) string {
	switch o {
	case sarama.OffsetOldest:
		return "the oldest offset"
	case sarama.OffsetNewest:
		return "the newest offset"
	}
	return fmt.Sprint(o)
}

// pump hands messages from src to the worker's output until an event ends
// it, or a seek or the source's end moves it: it returns where to resume
// (ended false), or the event that ends consuming (ended).
//
// Events are taken whenever the pending flag says one was raised, before
// every hand-over, and they cut a wait for the source, for a reader or for
// the fence short.
func (w *partitionWorker) pump(owned *offsets.Partition, src fetch.Source, start int64) (resume int64, end workerEvent, ended bool) {
	last := int64(-1)
	out := w.out
	valid := func() bool { return w.cg.kazoo.SessionID() == owned.Claim.SessionID }
	wake := w.ev.wait()
	var held *sarama.ConsumerMessage // not handed over yet: offered again first
	for {
		if w.ev.pending.Load() {
			wake = w.ev.wait()
			if e, resume, ended, ok := w.takeWhileConsuming(owned, start); ok {
				return resume, e, ended
			}
		}
		var m *sarama.ConsumerMessage
		if held != nil {
			m, held = held, nil
		} else {
			var err error
			if m, err = src.Next(wake); err != nil {
				// The source ended on its own (a failed open, a feed
				// error, sarama gave up on the partition): resume after
				// what went out.
				if last >= 0 {
					return last + 1, eventSeek, false
				}
				return start, eventSeek, false
			}
			if m == nil {
				wake = w.ev.wait()
				continue // the pending flag is set: take the event
			}
			if w.ev.pending.Load() {
				// Raised while Next waited: a select with a batch (or the
				// open's readiness) ready beside wake may take either.
				// The event comes first; m is offered again after it.
				held = m
				continue
			}
		}
		if resumed := owned.Pause.Held(); resumed != nil {
			// Paused by the application: hand nothing out until the resume
			// (events still come first); m is offered again then.
			held = m
			select {
			case <-resumed:
			case <-wake:
			}
			continue
		}
		owned.Offer(m.Offset)
		owned.OfferMessage(m)
		// valid (the claim's session is the current one) is checked before
		// the hand-over and again after every pause.
		delivered, stale := w.cg.gate.SendIf(wake, out, m, valid)
		switch {
		case delivered:
			owned.Delivered(m.Offset)
			last = m.Offset
		case stale:
			// The session holding the claim is gone: someone else may own
			// the partition by now.
			w.ev.raise(eventExpiry)
			return 0, w.endConsuming(owned), true
		default:
			// An event cut the hand-over short: m was not handed over. The
			// loop takes the event; if it only moved nothing (none left),
			// m is offered again first, never skipped.
			wake = w.ev.wait()
			if e, resume, ended, ok := w.takeWhileConsuming(owned, start); ok {
				return resume, e, ended
			}
			held = m
		}
	}
}
