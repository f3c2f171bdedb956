package worker

import (
	"sync"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// A claim's channel is buffered; whenever the handler must not read what
// the buffer holds (a possible loss, a seek, a pause, a drain timeout, a
// handler gone), the worker takes it back first, with commits held back
// and capped below the lowest offset taken back. A clean stop takes
// nothing back. See docs/recall.md.

// recall takes back every message the output's buffer holds and returns
// how many it took and the lowest offset among them. Only the worker sends
// on the channel, so once it returns the buffer stays empty until the
// worker sends again. From a shared buffer (an Outbox) it takes back only
// the partition's own messages.
func (w *Worker) recall() (n int, lowest int64) {
	lowest = -1
	for _, m := range w.takeBuffered() {
		w.keepUnhanded(m)
		lowest = lowerOffset(lowest, m.Offset)
		n++
	}
	return n, lowest
}

// takeBuffered empties the output's buffer of the partition's messages
// and returns them.
func (w *Worker) takeBuffered() []*sarama.ConsumerMessage {
	if w.outbox != nil {
		if w.fencedOff() {
			// Every partition takes the gate's pause: one take-back of
			// everything serves them all, and nothing waits in the
			// channel for a partition that has yet to take it.
			return w.outbox.TakeBackAll()
		}
		return w.outbox.TakeBack()
	}
	if w.out == nil || cap(w.out) == 0 {
		return nil
	}
	var ms []*sarama.ConsumerMessage
	for {
		select {
		case m, ok := <-w.out:
			if !ok { // closed and empty
				return ms
			}
			ms = append(ms, m)
		default:
			return ms
		}
	}
}

// lowerOffset returns the lower of two offsets, a negative one meaning
// none.
func lowerOffset(a, b int64) int64 {
	if a < 0 || b >= 0 && b < a {
		return b
	}
	return a
}

// recallCapped takes back what the output's buffer holds with commits held
// back (see beginRecall), and caps the position to commit at the lowest
// offset taken back: the handler may mark a message it got beside the
// recall, above one taken back.
func (w *Worker) recallCapped(owned *offsets.Partition) (n int, lowest int64) {
	owned.BeginRecall()
	defer owned.EndRecall()
	if n, lowest = w.recall(); n > 0 {
		owned.Tracker.LowerCeiling(lowest) // a lower one another take-back set still holds
	}
	return n, lowest
}

// recallRestarting takes back what the output's buffer holds with commits
// held back and, when it took anything, restarts the partition at its
// marked offset, never above the lowest offset taken back (see
// restartAtMark): the drain waits for nothing handed out before, and marks
// of messages handed out before are refused. It returns how many it took
// and where the partition restarts.
func (w *Worker) recallRestarting(owned *offsets.Partition) (n int, to int64) {
	owned.BeginRecall()
	defer owned.EndRecall()
	n, lowest := w.recall()
	if n > 0 {
		to = owned.RestartAtMark(lowest)
	}
	return n, to
}

// recallOnPause empties the output's buffer while the gate is paused. When
// it, or the take-back outside pump before it, took something back, the
// partition restarts at its marked offset below the lowest offset taken
// back (restarted; to is where to fetch from, start when nothing is
// marked). Otherwise nothing changes. Called with handing held.
func (w *Worker) recallOnPause(owned *offsets.Partition, start int64) (to int64, restarted bool) {
	owned.BeginRecall()
	defer owned.EndRecall()
	n, below := w.recall()
	below = lowerOffset(lowerOffset(below, w.takenBack), w.takeOvertaken())
	w.takenBack = -1
	if below < 0 {
		return 0, false
	}
	if to = owned.RestartAtMark(below); to < 0 {
		to = start
	}
	w.log.Info("fenced off with messages unread in the claim's buffer: taken back; the partition restarts at its marked offset", "offset", to, "taken back", n, "from", below)
	return to, true
}

// onGatePause is the worker's listener on the delivery gate, for its whole
// life: it posts the pause, and takes the buffer back at once when no pump
// runs (see takeBackOutsidePump). It runs in the gate's goroutine, so it
// must not block.
func (w *Worker) onGatePause() {
	w.inbox.Pause()
	w.takeBackOutsidePump()
}

// takeBackOutsidePump empties the output's buffer when the gate pauses
// while the worker is consuming but no pump runs (it may be elsewhere for
// long), and posts the pause again, so its handling restarts below the
// lowest offset taken back. It must not block: commitMu is not taken. See
// docs/recall.md, "The take-back outside pump".
func (w *Worker) takeBackOutsidePump() {
	if !w.handing.TryLock() {
		return // pump (or the worker's own take) handles the pause itself
	}
	defer w.handing.Unlock()
	owned := w.takeBackFrom
	if owned == nil || w.out == nil || cap(w.out) == 0 {
		return // not consuming, or nothing a buffer could hold
	}
	if n, lowest := w.recallCapped(owned); n > 0 {
		w.takenBack = lowerOffset(w.takenBack, lowest)
		w.log.Info("fenced off with messages unread in the claim's buffer: taken back", "taken back", n, "from", lowest)
		w.inbox.Pause()
	}
}

// recallWhileDraining empties the closed output's buffer while the gate is
// paused; the final commit then stores the marked position. What another
// partition's take-back took of a shared buffer is settled first (see
// settleOvertaken).
func (w *Worker) recallWhileDraining() {
	w.settleOvertaken()
	if n, to := w.recallRestarting(w.owned); n > 0 {
		w.log.Info("fenced off while draining with messages unread in the claim's buffer: taken back; committing the marked offset", "offset", to, "taken back", n)
	}
}

// recallAfterDrainTimeout empties the closed output's buffer once the drain
// gave up waiting (Offsets.ProcessingTimeout): the claim is released next,
// so the handler must read nothing more from it.
func (w *Worker) recallAfterDrainTimeout() {
	if n, lowest := w.recallCapped(w.owned); n > 0 {
		w.log.Warn("the drain timed out with messages unread in the claim's buffer: taken back", "taken back", n, "from", lowest)
	}
}

// recallBeforeRelease empties the output's buffer when the claim may no
// longer be ours (a loss, an abandon, an expiry). Nothing is committed on
// purpose any more, but the partition stays tracked until the release
// drops it, and the commit loop may commit it meanwhile.
func (w *Worker) recallBeforeRelease(owned *offsets.Partition) {
	if w.out == nil || len(w.out) == 0 || owned == nil {
		w.recall()
		return
	}
	w.recallCapped(owned)
}

// recallUnread empties the closed output's buffer once its reader is gone
// (a handler's ConsumeClaim returned): nobody reads or marks what it
// holds, so the drain must not wait for it.
func (w *Worker) recallUnread() {
	if n, lowest := w.recallCapped(w.owned); n > 0 {
		w.log.Info("the claim's handler returned with messages unread in its buffer: taken back", "taken back", n, "from", lowest)
	}
}

// sharedRecall is how a take-back by another partition's worker from the
// shared buffer hands this one the messages it took of it (see Outbox):
// the commits are held back meanwhile, the position capped below them,
// and a pause posted; consuming, its handling restarts below them, as
// after a recall of the worker's own; draining, see settleOvertaken.
type sharedRecall struct {
	w     *Worker
	owned *offsets.Partition
}

func (r sharedRecall) holdCommits() (release func()) {
	r.owned.BeginRecall()
	return r.owned.EndRecall
}

func (r sharedRecall) takenBack(ms []*sarama.ConsumerMessage, last int64) {
	lowest, highest := ms[0].Offset, ms[0].Offset
	for _, m := range ms {
		lowest, highest = min(lowest, m.Offset), max(highest, m.Offset)
	}
	r.owned.Tracker.LowerCeiling(lowest)
	r.w.overtaken.add(ms, lowest, highest, last)
	r.w.inbox.Pause()
}

// overtakenMessages collects what take-backs by other partitions' workers
// took of this one (see sharedRecall), until the worker takes them.
type overtakenMessages struct {
	mu      sync.Mutex
	ms      []*sarama.ConsumerMessage
	lowest  int64 // of ms
	highest int64 // of ms
	last    int64 // sent just before ms, the application got nothing after it (-1: unknown)
}

func (o *overtakenMessages) add(ms []*sarama.ConsumerMessage, lowest, highest, last int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.ms) == 0 {
		o.lowest, o.highest, o.last = lowest, highest, last
	} else {
		// Taken twice: the partition sent again after the first, and
		// what it sent just before is known only for the first.
		o.lowest, o.highest, o.last = min(o.lowest, lowest), max(o.highest, highest), -1
	}
	o.ms = append(o.ms, ms...)
}

// take returns and forgets what was collected (ms nil: nothing).
func (o *overtakenMessages) take() (ms []*sarama.ConsumerMessage, lowest, highest, last int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ms, o.ms = o.ms, nil
	return ms, o.lowest, o.highest, o.last
}

// takeOvertaken returns the lowest offset taken back from the shared
// buffer by another partition's take-back after the application got a
// later one (-1: none), and keeps what was taken for its next hand-out,
// so the consumer's interceptors do not run on it again (see
// interceptOnce). Called with handing held, or by the worker away from
// pump.
func (w *Worker) takeOvertaken() int64 {
	ms, lowest, _, _ := w.overtaken.take()
	if len(ms) == 0 {
		return -1
	}
	for _, m := range ms {
		w.keepUnhanded(m)
	}
	return lowest
}

// settleOvertaken is takeOvertaken while draining: nothing restarts, the
// position stays capped below what was taken (the ceiling set when it was
// taken), and the drain waits for the marks of what the application got,
// which still count; when what the partition sent just before is known
// and nothing was delivered since, only up to that.
func (w *Worker) settleOvertaken() {
	ms, _, highest, last := w.overtaken.take()
	if len(ms) == 0 || w.owned == nil {
		return
	}
	if last >= 0 {
		w.owned.Tracker.TakeBackDelivered(highest, last)
	}
}
