package worker

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
)

// consumePartition is state consuming: read and track the committed offset,
// open the hand-over, then fetch and hand messages out, following seeks,
// until a message ends it.
func (w *Worker) consumePartition() Event {
	stored, err := w.readOffset()
	if err != nil {
		return w.takeOr(Consuming, Stop) // the worker's context ended: a message says why
	}
	owned := w.deps.Offsets.Adopt(offsets.TopicPartition(w.tp), w.claim, stored, w)
	w.owned = owned
	w.stopWatch = make(chan struct{})
	go w.watchClaim(w.claim, owned, w.stopWatch)
	w.alignStores(owned, stored)
	sink := w.deps.Sink()
	if w.out, w.readerGone = sink.Open(w, owned, stored.Start()); w.out == nil {
		return w.endConsuming() // nothing will be handed out after all
	}
	if s, ok := sink.(SharedSink); ok {
		if o := s.Outbox(); o != nil {
			w.outbox = o.Register(w.tp, sharedRecall{w, owned})
		}
	}
	w.sink = sink
	return w.consume(owned, stored.Start())
}

// readOffset reads the committed offsets from the stores in use, retrying
// (and reporting) errors every Claim.RetryCooldown: a corrupt offset node,
// or a Kafka coordinator that does not answer, is reported and the
// partition is held, never consumed from a guessed position.
func (w *Worker) readOffset() (offsets.Stored, error) {
	stored, err := backoff.RetryWithData(func() (offsets.Stored, error) {
		stored, err := w.deps.Offsets.Store().Read(offsets.TopicPartition(w.tp))
		switch {
		case err == nil:
		case errors.Is(err, offsets.ErrGroupClosing):
			w.log.Debug("closing: stopped waiting for the committed offset", "err", err)
		default:
			w.report(fmt.Errorf("read committed offset: %w", err))
		}
		return stored, err
	}, backoff.WithContext(backoff.NewConstantBackOff(w.cfg.RetryCooldown), w.ctx))
	if err != nil {
		return stored, w.ctx.Err() // every error is retried until the context ends
	}
	return stored, nil
}

// cooldown waits Claim.RetryCooldown before a retry. It returns false,
// early, when the worker's context ends (stop, abandon, loss, expiry).
func (w *Worker) cooldown() bool {
	t := time.NewTimer(w.cfg.RetryCooldown)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// consume fetches from next (negative: Offsets.Initial) and delivers until
// a message other than a seek or a pause ends it, which it returns; a
// seek, a pause that took messages back and the end of a source restart
// the fetch.
func (w *Worker) consume(owned *offsets.Partition, next int64) Event {
	w.handing.Lock()
	w.takeBackFrom = owned // the gate's take-back outside pump may act now
	w.handing.Unlock()
	defer func() {
		w.handing.Lock()
		w.takeBackFrom = nil
		w.handing.Unlock()
	}()
	fetcher := w.deps.Fetch.Partition(w.ctx, w.tp.Topic, w.tp.Partition, &w.hwm, w.onOutOfRange(owned))
	start := next
	for {
		// Messages posted while no pump ran. Checked again once handing
		// is free: a pause posted while it was held left all to us.
		for w.inbox.Pending() {
			e, resume, ended, ok := w.takeLocked(start)
			switch {
			case ok && ended:
				return e
			case ok:
				start = resume
			}
		}
		if start < 0 { // nothing stored: start at Offsets.Initial, resolved
			var ok bool
			if start, ok = w.startAtInitial(owned); !ok {
				return w.endConsuming()
			}
		}
		src, err := fetcher.Open(start)
		w.markOpened()
		if err != nil {
			if to, lost := fetch.LostPosition(err); lost {
				var ok bool
				if start, ok = w.resumeAfterLoss(owned, err, start, to); !ok {
					return w.endConsuming()
				}
				continue
			}
			if w.ctx.Err() != nil || errors.Is(err, offsets.ErrGroupClosing) || errors.Is(err, fetch.ErrClosing) {
				return w.endConsuming()
			}
			if errors.Is(err, offsets.ErrSeekPending) && w.inbox.Pending() {
				continue // the offset stored underneath wins: take the seek
			}
			w.report(fmt.Errorf("start partition consumer at %d: %w", start, err))
			if !w.cooldown() {
				return w.endConsuming()
			}
			continue
		}
		w.handing.Lock()
		resume, end, ended := w.pump(owned, src, start)
		w.handing.Unlock()
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
		// A failed source: the next Open reads through sarama's partition
		// consumer. One that lost its position says where to go on.
		err = src.Close()
		start = resume
		if to, lost := fetch.LostPosition(err); lost && end == SourceEnded {
			var ok bool
			if start, ok = w.resumeAfterLoss(owned, err, start, to); !ok {
				return w.endConsuming()
			}
		}
	}
}

// resumeAfterLoss moves the partition from position, which left the log's
// range mid-stream (lost: a *fetch.TruncationError or a
// *fetch.RetentionError), to to, the log's end or start, and reports lost.
// to is stored before anything after it is handed out; below the
// committed offset (a truncation past what was committed) it is stored as
// a reset, which ends the claim, where the store can (ZooKeeper), as
// onOutOfRange does. The marks of messages delivered before, at or past
// to, never count (see offsets.Partition.RestartUncommittedUnlessRewind).
// It returns where to fetch next, or false when consuming ends (the claim
// ended, or the worker's context). See docs/batch-feed.md, "Out of range
// mid-stream".
func (w *Worker) resumeAfterLoss(owned *offsets.Partition, lost error, position, to int64) (int64, bool) {
	to, lost = w.takeBackBeforeLoss(lost, position, to)
	if !owned.RestartUncommittedUnlessRewind(to) {
		applies, err := w.deps.Offsets.RewindAsReset(owned, to)
		switch {
		case applies && errors.Is(err, offsets.ErrSeekPending):
			return position, true // the offset stored underneath wins: take the seek
		case applies && err != nil:
			w.report(fmt.Errorf("store offset %d as a reset after %w: %w", to, lost, err))
			if owned.Lost() || !w.cooldown() {
				return 0, false
			}
			return position, true // read it again: lost again, or a seek meanwhile
		case applies:
			w.report(lost)
			w.log.Warn("log truncated below the committed offset: stored its end as a reset, ending the claim",
				"offset", to, "position", position)
			return 0, false // the claim ended with the reset: the loss event follows
		}
		owned.RestartUncommitted(to) // the store knows no epochs: a lower offset is written as onOutOfRange writes it
	}
	w.report(lost)
	if !w.commitStart(owned) {
		return 0, false
	}
	return to, true
}

// takeBackBeforeLoss forgets, as the partition leaves a lost position,
// what was kept for the interceptors (records of a truncated log are
// written again at the same offsets) and, with a shared buffer, takes
// back what it holds of the partition: another partition's take-back
// could find those messages later and restart the partition below to.
// What it took is not skipped unreported: below a truncated log's end it
// is fetched again (to moves down to it), and below a retained log's
// start the report names it (its position moves down to it). It returns
// where to resume and the loss to report.
func (w *Worker) takeBackBeforeLoss(lost error, position, to int64) (int64, error) {
	w.handing.Lock()
	defer w.handing.Unlock()
	lowest := int64(-1)
	if w.outbox != nil {
		_, lowest = w.recall()
		w.takenBack = -1
		lowest = lowerOffset(lowest, w.takeOvertaken())
	}
	clear(w.unhanded) // after the take-back, which keeps what it took there
	if lowest < 0 || lowest >= position {
		return to, lost
	}
	var trunc *fetch.TruncationError
	var ret *fetch.RetentionError
	switch {
	case errors.As(lost, &trunc) && lowest < to:
		return lowest, lost
	case errors.As(lost, &ret):
		e := *ret
		e.Position = lowest
		return to, &e
	}
	return to, lost
}

// endConsuming returns the event that ends consuming once nothing more
// will be handed out: the message posted (stop, abandon or loss; seeks
// and pauses before it are handled), or a stop when none was.
func (w *Worker) endConsuming() Event {
	for {
		e, _, ended, ok := w.takeLocked(-1)
		if !ok || ended {
			return e
		}
	}
}

// takeLocked is takeWhileConsuming with handing held, for the worker
// away from pump.
func (w *Worker) takeLocked(start int64) (e Event, resume int64, ended, ok bool) {
	w.handing.Lock()
	defer w.handing.Unlock()
	return w.takeWhileConsuming(start)
}

// takeWhileConsuming takes and handles the pending messages in state
// consuming (see handle) until one ends consuming (ended), one restarts
// the fetch (resume there: a seek, or a pause that took messages back), or
// none is left (ok false). start is where the current fetch started.
// Called with handing held.
func (w *Worker) takeWhileConsuming(start int64) (e Event, resume int64, ended, ok bool) {
	for {
		m, ok := w.inbox.Take()
		if !ok {
			return Stop, 0, true, false
		}
		e, resume, restart := w.handle(Consuming, m, start)
		if Next(Consuming, e) != Consuming {
			return e, 0, true, true
		}
		if restart {
			return e, resume, false, true
		}
	}
}

// onOutOfRange handles a stored offset out of the log's range as upstream
// does: it is reported and replaced by Offsets.Initial, resolved to a real
// offset, which is committed at once (see startAtInitial); later marks
// commit from it. It returns where the partition consumer opens instead.
func (w *Worker) onOutOfRange(owned *offsets.Partition) fetch.OutOfRangeFunc {
	return func(start int64, err error) (int64, error) {
		initial := w.cfg.Initial
		resolved, rerr := w.resolveInitial()
		if rerr != nil {
			return 0, fmt.Errorf("offset %d is out of range (%w); resolve %s (Offsets.Initial): %w", start, err, offsetName(initial), rerr)
		}
		if resolved < start {
			// Below the stored offset (the log was truncated or the topic
			// re-created): a lower offset is stored only as a reset is,
			// with an epoch bump that ends this claim; the worker then
			// claims again and reads it.
			if applies, rerr := w.deps.Offsets.RewindAsReset(owned, resolved); applies {
				if rerr != nil {
					return 0, rerr
				}
				w.report(fmt.Errorf("offset %d is out of range; reset to %d, %s (Offsets.Initial), ending the claim: %w", start, resolved, offsetName(initial), err))
				return 0, errClaimEndedByRewind
			}
		}
		w.report(fmt.Errorf("offset %d is out of range; restarting at %d, %s (Offsets.Initial): %w", start, resolved, offsetName(initial), err))
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

// pump hands messages from src to the worker's output until a message
// ends it, or a seek, a pause or the source's end moves it: it returns
// where to resume (ended false), or the event that ends consuming (ended).
// Called with handing held.
//
// Messages are taken whenever the inbox's pending flag is set, before
// every hand-over, and they cut a wait for the source, for a reader or for
// the fence short.
func (w *Worker) pump(owned *offsets.Partition, src fetch.Source, start int64) (resume int64, end Event, ended bool) {
	last := int64(-1)
	var out fence.Outlet = fence.Chan(w.out)
	if w.outbox != nil {
		out = w.outbox
	}
	valid := func() bool { return w.deps.Session.SessionID() == owned.Claim.SessionID }
	wake := w.inbox.Wait()
	var held *sarama.ConsumerMessage // not handed over yet: offered again first
	w.forgetUnhandedBelow(start)
	for {
		if w.inbox.Pending() {
			wake = w.inbox.Wait()
			if e, resume, ended, ok := w.takeWhileConsuming(start); ok {
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
					return last + 1, SourceEnded, false
				}
				return start, SourceEnded, false
			}
			if m == nil {
				wake = w.inbox.Wait()
				continue // the pending flag is set: take the event
			}
			if w.inbox.Pending() {
				// Posted while Next waited: a select with a batch (or the
				// open's readiness) ready beside wake may take either.
				// The message comes first; m is offered again after it.
				held = m
				continue
			}
		}
		if resumed := owned.Pause.Held(); resumed != nil {
			// Paused by the application: hand nothing out until the resume
			// (messages still come first); m is offered again then.
			held = m
			select {
			case <-resumed:
			case <-wake:
			}
			continue
		}
		m = w.interceptOnce(m)
		owned.Offer(m.Offset)
		owned.OfferMessage(m)
		// valid (the claim's session is the current one) is checked before
		// the hand-over and again after every pause.
		delivered, stale := w.deps.Gate.SendTo(wake, out, m, valid)
		switch {
		case delivered:
			delete(w.unhanded, m.Offset)
			owned.Delivered(m.Offset)
			last = m.Offset
		case stale:
			// The session holding the claim is gone: someone else may own
			// the partition by now.
			w.expired = true
			w.cancel() // as a message that ends the worker would
			e, _, _ := w.handle(Consuming, Message{Event: Expiry}, start)
			return 0, e, true
		default:
			// A message cut the hand-over short: m was not handed over. The
			// loop takes the event; if it only moved nothing (none left),
			// m is offered again first, never skipped.
			wake = w.inbox.Wait()
			if e, resume, ended, ok := w.takeWhileConsuming(start); ok {
				return resume, e, ended
			}
			held = m
		}
	}
}

// interceptOnce runs the consumer's interceptors (Deps.HandingOut) on m as
// it goes out, once per record: a message they ran on whose hand-over was
// cut short, or that a recall took back unread, is kept, and goes out in
// place of the same offset fetched again. A fetched message a seek or a
// pause drops before its hand-over is never intercepted. See
// docs/batch-feed.md, "Interceptors". Called with handing held.
func (w *Worker) interceptOnce(m *sarama.ConsumerMessage) *sarama.ConsumerMessage {
	h := w.deps.HandingOut
	if h == nil {
		return m
	}
	if kept, ok := w.unhanded[m.Offset]; ok {
		return kept
	}
	h(m)
	if w.unhanded == nil {
		w.unhanded = make(map[int64]*sarama.ConsumerMessage)
	}
	w.unhanded[m.Offset] = m
	return m
}

// keepUnhanded keeps m, intercepted and taken back unread, for its next
// hand-out (see interceptOnce).
func (w *Worker) keepUnhanded(m *sarama.ConsumerMessage) {
	if w.deps.HandingOut != nil && m != nil {
		if w.unhanded == nil {
			w.unhanded = make(map[int64]*sarama.ConsumerMessage)
		}
		w.unhanded[m.Offset] = m
	}
}

// forgetUnhandedBelow drops the kept messages below start, where a fetch
// begins: what interceptOnce keeps stays bounded by a claim's buffer and
// the one hand-over in progress.
func (w *Worker) forgetUnhandedBelow(start int64) {
	for o := range w.unhanded {
		if o < start {
			delete(w.unhanded, o)
		}
	}
}
