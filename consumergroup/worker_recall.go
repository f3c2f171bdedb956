package consumergroup

import "github.com/zkgroup/kafka/internal/offsets"

// A claim's channel is buffered; whenever the handler must not read what
// the buffer holds (a possible loss, a seek, a pause, a drain timeout, a
// handler gone), the worker takes it back first, with commits held back
// and capped below the lowest offset taken back. A clean stop takes
// nothing back. See docs/recall.md.

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
func (w *partitionWorker) recallCapped(owned *offsets.Partition) (n int, lowest int64) {
	owned.BeginRecall()
	defer owned.EndRecall()
	if n, lowest = w.recall(); n > 0 {
		owned.Tracker.SetCeiling(lowest)
	}
	return n, lowest
}

// recallRestarting takes back what the output's buffer holds with commits
// held back and, when it took anything, restarts the partition at its
// marked offset, never above the lowest offset taken back (see
// restartAtMark): the drain waits for nothing handed out before, and marks
// of messages handed out before are refused. It returns how many it took
// and where the partition restarts.
func (w *partitionWorker) recallRestarting(owned *offsets.Partition) (n int, to int64) {
	owned.BeginRecall()
	defer owned.EndRecall()
	n, lowest := w.recall()
	if n > 0 {
		to = owned.RestartAtMark(lowest)
	}
	return n, to
}

// recallOnPause empties the output's buffer while the gate is paused. When
// it took something back, the partition restarts at its marked offset
// (restarted; to is where to fetch from, start when nothing is marked).
// When nothing was taken back, nothing changes.
func (w *partitionWorker) recallOnPause(owned *offsets.Partition, start int64) (to int64, restarted bool) {
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
func (w *partitionWorker) onPause(owned *offsets.Partition) func() {
	return func() {
		w.ev.raisePause()
		w.takeBackOutsidePump(owned)
	}
}

// restartAfterTakeBack returns where to restart (restart true) when a
// pause took messages back while no pump ran: the marked offset below the
// lowest one taken back, as pump does after its own recall (start when
// nothing is marked). Called with handing held, before pump.
func (w *partitionWorker) restartAfterTakeBack(owned *offsets.Partition, start int64) (to int64, restart bool) {
	below := w.takenBack
	if below < 0 {
		return 0, false
	}
	w.takenBack = -1
	owned.BeginRecall()
	defer owned.EndRecall()
	if to = owned.RestartAtMark(below); to < 0 {
		to = start
	}
	return to, true
}

// takeBackOutsidePump empties the output's buffer when the gate pauses
// while no pump runs (the worker may be elsewhere for long); the next pump
// restarts below the lowest offset taken back. It runs in the gate's
// goroutine, so it must not block: commitMu is not taken. See
// docs/recall.md, "The take-back outside pump".
func (w *partitionWorker) takeBackOutsidePump(owned *offsets.Partition) {
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
func (w *partitionWorker) recallBeforeRelease(owned *offsets.Partition) {
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

// maxClaimBuffer caps a claim's buffer: it bounds how long a clean stop
// waits for the handler to finish the buffer (see docs/recall.md).
const maxClaimBuffer = 64
