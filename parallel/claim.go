package parallel

import (
	"context"
	"time"

	"github.com/IBM/sarama"
)

// stopCause is why a claim stops reading.
type stopCause int

const (
	notStopped    stopCause = iota
	channelClosed           // the claim's Messages() closed: revoked, lost or fenced
	claimDropped            // the session no longer lists the claim (see claimWatch)
	sessionEnded            // the session's context is done
	messageFailed           // a message failed under FailureStop
)

// claimRun is one ConsumeClaim call. Its state (the window, the lanes,
// the count of messages running) belongs to the goroutine running run;
// the goroutines running fn report back on results.
type claimRun struct {
	h       *handler
	session sarama.ConsumerGroupSession
	claim   sarama.ConsumerGroupClaim

	win        window
	lanes      *lanes
	processing int                     // messages started whose result has not come back
	results    chan result             // capacity MaxInFlight: a report never blocks
	workCtx    context.Context         // fn's; cancelled when the drain gives up
	cancel     func()                  // cancels workCtx
	stopping   chan struct{}           // closed when the claim stops reading: no retry starts
	cause      stopCause               // why the claim stopped; notStopped until then
	failed     *MessageError           // the message that stopped the claim
	lastMark   *sarama.ConsumerMessage // the last message marked by this run
}

func newClaimRun(h *handler, session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) *claimRun {
	// fn's context keeps the session's values but not its cancellation:
	// the session ending starts the drain, which cancels it only when it
	// gives up.
	ctx, cancel := context.WithCancel(context.WithoutCancel(session.Context()))
	return &claimRun{
		h:        h,
		session:  session,
		claim:    claim,
		lanes:    newLanes(),
		results:  make(chan result, h.cfg.MaxInFlight),
		workCtx:  ctx,
		cancel:   cancel,
		stopping: make(chan struct{}),
	}
}

// run reads the claim and starts work until the claim stops, then drains.
// The channel is read only while fewer than MaxInFlight messages are held;
// meanwhile claimWatch looks out for a revoke the channel cannot show.
func (r *claimRun) run() error {
	defer r.cancel()
	msgs := r.claim.Messages()
	done := r.session.Context().Done()
	watch := newClaimWatch(r.session, r.claim, r.h.claimPoll)
	defer watch.stop()
	for r.cause == notStopped {
		if r.session.Context().Err() != nil {
			r.cause = sessionEnded
			break
		}
		in, poll := msgs, (<-chan time.Time)(nil)
		if r.win.size() >= r.h.cfg.MaxInFlight {
			in, poll = nil, watch.tick()
		}
		select {
		case msg, ok := <-in:
			if !ok {
				r.cause = channelClosed
				break
			}
			r.admit(msg)
		case res := <-r.results:
			r.finish(res)
		case <-done:
			r.cause = sessionEnded
		case <-poll:
			if watch.dropped() {
				r.cause = claimDropped
			}
		}
	}
	return r.drain()
}

// admit holds msg and starts it unless an earlier message of its key is
// held.
func (r *claimRun) admit(msg *sarama.ConsumerMessage) {
	e := &entry{msg: msg, lane: r.lanes.of(msg.Key, r.h.cfg.NilKey)}
	r.win.push(e)
	switch {
	case e.lane == nil:
		r.start(e)
	case e.lane.running:
		e.lane.waiting = append(e.lane.waiting, e)
	default:
		e.lane.running = true
		r.start(e)
	}
}

// start runs e's message on a goroutine of its own.
func (r *claimRun) start(e *entry) {
	r.processing++
	go func() { r.results <- r.h.process(r.workCtx, r.stopping, e) }()
}

// finish takes a processing's result: it settles the message, marks the
// finished prefix, and starts the next message of its key unless the
// claim stops.
func (r *claimRun) finish(res result) {
	r.processing--
	e := res.entry
	switch res.outcome {
	case succeeded:
		e.finished = true
	case exhausted:
		if r.h.cfg.OnFailure == FailureSkip {
			if r.h.cfg.OnSkip != nil {
				r.h.cfg.OnSkip(e.msg, res.err)
			}
			e.finished = true
		} else if r.failed == nil {
			r.failed = &MessageError{Topic: e.msg.Topic, Partition: e.msg.Partition, Offset: e.msg.Offset, Attempts: res.attempts, Err: res.err}
			r.cause = messageFailed
			r.stop()
		}
	case abandoned:
		// Unfinished: nothing at or past it is marked.
	}
	if last := r.win.advance(); last != nil {
		r.session.MarkMessage(last, "")
		r.lastMark = last
	}
	ln := e.lane
	if ln == nil {
		return
	}
	ln.running = false
	if r.cause == notStopped && len(ln.waiting) > 0 {
		next := ln.waiting[0]
		ln.waiting[0] = nil
		ln.waiting = ln.waiting[1:]
		ln.running = true
		r.start(next)
	}
	r.lanes.release(ln)
}

// stop closes stopping once: no retry starts after it.
func (r *claimRun) stop() {
	select {
	case <-r.stopping:
	default:
		close(r.stopping)
	}
}

// drain is the claim's end: nothing new starts (waiting messages stay
// unstarted, retries stop), the messages running get DrainTimeout to
// finish and be marked, then fn's context is cancelled and ConsumeClaim
// returns without waiting further. When messages are left unfinished it
// hands them back (see handBack).
func (r *claimRun) drain() error {
	r.stop()
	timer := time.NewTimer(r.h.cfg.DrainTimeout)
	defer timer.Stop()
	for r.processing > 0 {
		select {
		case res := <-r.results:
			r.finish(res)
		case <-timer.C:
			r.cancel()
			r.handBack()
			return r.err()
		}
	}
	r.handBack()
	return r.err()
}

// handBack tells the session, when messages read are left unfinished,
// that they will not be marked: ResetOffset to the position already
// marked. Under sarama that changes nothing; consumergroup's HandlerGroup
// then no longer waits Offsets.ProcessingTimeout for their marks before
// it commits and hands the partition over. See docs/parallel.md.
func (r *claimRun) handBack() {
	oldest := r.win.oldest()
	if oldest == nil {
		return
	}
	next := oldest.msg.Offset
	switch {
	case r.lastMark != nil:
		next = r.lastMark.Offset + 1
	case r.claim.InitialOffset() >= 0 && r.claim.InitialOffset() < next:
		next = r.claim.InitialOffset()
	}
	r.session.ResetOffset(r.claim.Topic(), r.claim.Partition(), next, "")
}

// err is what ConsumeClaim returns.
func (r *claimRun) err() error {
	if r.failed != nil {
		return r.failed
	}
	return nil
}
