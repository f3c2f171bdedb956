package consumergroup

// A claim's own channel (a handler's claim) is buffered, as sarama's claims
// are (Config.ChannelBufferSize, at most maxClaimBuffer): the worker hands
// messages to the buffer, and the handler reads them at its pace. A message
// in the buffer is not handed over yet. Whenever the handler must not read
// what the buffer holds, the worker takes it back (recall) before it acts:
//   - the claim may no longer be ours (loss, abandon, expiry), or the
//     position moved (a seek): the buffer is emptied and nothing in it
//     counts;
//   - the instance is fenced off from ZooKeeper (a pause event, raised by
//     the delivery gate, which the worker listens to while it consumes and
//     drains): the buffer is emptied, and the partition restarts at its
//     marked position once the gate opens (see recallOnPause);
//   - a drain gave up waiting for marks (Offsets.ProcessingTimeout): the
//     claim is released next.
//
// A clean stop takes nothing back: the channel closes, the handler reads
// what the buffer holds, and the drain waits for those marks, as under
// sarama, unless the handler's ConsumeClaim returns first: nobody reads
// the rest then, so it is taken back (see recallUnread). Messages() is
// unbuffered, so there is never anything to recall.
//
// The handler may read from the buffer while the worker empties it, so
// what the handler got need not be a prefix of what was in the buffer (it
// may get offset 3 while the worker takes 2 back, and mark it). Commits
// hold back while the buffer is emptied (see beginRecall), and the position
// is then capped at the lowest offset taken back (or, on a pause, restarts
// at the marked position below it), so no commit passes a message the
// handler never got: also after a loss, an abandon or an expiry, since the
// partition stays tracked, and the commit loop may commit it, until the
// release. The handler processes messages in the order it got them, so a
// mark of 3 never means that 2, which it did not get, was processed.

// recall takes back every message the output's buffer holds and returns
// how many it took and the lowest offset among them. Only the worker sends
// on the channel, so once it returns the buffer stays empty until the
// worker sends again.
func (w *partitionWorker) recall() (n int, lowest int64) {
	lowest = -1
	if w.out == nil || cap(w.out) == 0 {
		return 0, -1
	}
	for {
		select {
		case m, ok := <-w.out:
			if !ok { // closed and empty
				return n, lowest
			}
			if n == 0 || m.Offset < lowest {
				lowest = m.Offset
			}
			n++
		default:
			return n, lowest
		}
	}
}

// recallCapped takes back what the output's buffer holds with commits held
// back (see beginRecall), and caps the position to commit at the lowest
// offset taken back: the handler may mark a message it got beside the
// recall, above one taken back.
func (w *partitionWorker) recallCapped(owned *ownedOffsets) (n int, lowest int64) {
	owned.beginRecall()
	defer owned.endRecall()
	if n, lowest = w.recall(); n > 0 {
		owned.tracker.SetCeiling(lowest)
	}
	return n, lowest
}

// recallRestarting takes back what the output's buffer holds with commits
// held back and, when it took anything, restarts the partition at its
// marked offset, never above the lowest offset taken back (see
// restartAtMark): the drain waits for nothing handed out before, and marks
// of messages handed out before are refused. It returns how many it took
// and where the partition restarts.
func (w *partitionWorker) recallRestarting(owned *ownedOffsets) (n int, to int64) {
	owned.beginRecall()
	defer owned.endRecall()
	n, lowest := w.recall()
	if n > 0 {
		to = owned.restartAtMark(lowest)
	}
	return n, to
}

// recallOnPause empties the output's buffer while the gate is paused. When
// it took something back, the partition restarts at its marked offset
// (restarted; to is where to fetch from, start when nothing is marked).
// When nothing was taken back, nothing changes.
func (w *partitionWorker) recallOnPause(owned *ownedOffsets, start int64) (to int64, restarted bool) {
	n, to := w.recallRestarting(owned)
	if n == 0 {
		return 0, false
	}
	if to < 0 {
		to = start
	}
	w.log.Info("fenced off with messages unread in the claim's buffer: taken back; the partition restarts at its marked offset", "offset", to, "taken back", n)
	return to, true
}

// onPause is what a consuming worker does when the delivery gate pauses:
// raise the pause for pump, and take back the buffer at once when no pump
// runs.
func (w *partitionWorker) onPause(owned *ownedOffsets) func() {
	return func() {
		w.ev.raisePause()
		w.takeBackOutsidePump(owned)
	}
}

// restartAfterTakeBack returns where to restart (restart true) when a
// pause took messages back while no pump ran: the marked offset below the
// lowest one taken back, as pump does after its own recall (start when
// nothing is marked). Called with handing held, before pump.
func (w *partitionWorker) restartAfterTakeBack(owned *ownedOffsets, start int64) (to int64, restart bool) {
	below := w.takenBack
	if below < 0 {
		return 0, false
	}
	w.takenBack = -1
	owned.beginRecall()
	defer owned.endRecall()
	if to = owned.restartAtMark(below); to < 0 {
		to = start
	}
	return to, true
}

// takeBackOutsidePump empties the output's buffer when the gate pauses
// while no pump runs: the worker may be elsewhere for long (sarama's
// partition consumer opens without a context, with 30 s timeouts; a
// cool-down; a start commit that ZooKeeper does not answer), and the
// handler must not read the buffer after the pause. Commits stay capped
// below the lowest offset taken back, and the next pump restarts at the
// marked offset below it (see consume). It runs in the gate's goroutine
// (or the worker's, after pump), so it must not block: commitMu, which a
// hanging commit holds, is not taken.
func (w *partitionWorker) takeBackOutsidePump(owned *ownedOffsets) {
	if w.out == nil || cap(w.out) == 0 || !w.handing.TryLock() {
		return // nothing to take back, or pump takes the pause event itself
	}
	defer w.handing.Unlock()
	if n, lowest := w.recallCapped(owned); n > 0 {
		if w.takenBack < 0 || lowest < w.takenBack {
			w.takenBack = lowest
		}
		w.log.Info("fenced off with messages unread in the claim's buffer: taken back", "taken back", n, "from", lowest)
	}
}

// recallWhileDraining empties the closed output's buffer while the gate is
// paused; the final commit then stores the marked position.
func (w *partitionWorker) recallWhileDraining() {
	if n, to := w.recallRestarting(w.owned); n > 0 {
		w.log.Info("fenced off while draining with messages unread in the claim's buffer: taken back; committing the marked offset", "offset", to, "taken back", n)
	}
}

// recallAfterDrainTimeout empties the closed output's buffer once the drain
// gave up waiting (Offsets.ProcessingTimeout): the claim is released next,
// so the handler must read nothing more from it.
func (w *partitionWorker) recallAfterDrainTimeout() {
	if n, lowest := w.recallCapped(w.owned); n > 0 {
		w.log.Warn("the drain timed out with messages unread in the claim's buffer: taken back", "taken back", n, "from", lowest)
	}
}

// recallBeforeRelease empties the output's buffer when the claim may no
// longer be ours (a loss, an abandon, an expiry). Nothing is committed on
// purpose any more, but the partition stays tracked until the release
// drops it, and the commit loop may commit it meanwhile.
func (w *partitionWorker) recallBeforeRelease(owned *ownedOffsets) {
	if w.out == nil || len(w.out) == 0 || owned == nil {
		w.recall()
		return
	}
	w.recallCapped(owned)
}

// recallUnread empties the closed output's buffer once its reader is gone
// (a handler's ConsumeClaim returned): nobody reads or marks what it
// holds, so the drain must not wait for it.
func (w *partitionWorker) recallUnread() {
	if n, lowest := w.recallCapped(w.owned); n > 0 {
		w.log.Info("the claim's handler returned with messages unread in its buffer: taken back", "taken back", n, "from", lowest)
	}
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// maxClaimBuffer caps a claim's buffer. A claim that ends cleanly lets its
// handler process what the buffer holds before the partition moves, so the
// cap bounds that time; beyond a few dozen messages a larger buffer no
// longer speeds up delivery.
const maxClaimBuffer = 64
