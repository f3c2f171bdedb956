package consumergroup

// A claim's own channel (a handler's claim) is buffered, as sarama's claims
// are: the worker hands messages to the buffer, and the handler reads them
// at its pace. A message in the buffer is not handed over yet. Whenever
// the handler must not read what the buffer holds, the worker takes it
// back (recall) before it acts:
//   - the claim may no longer be ours (loss, abandon, expiry), or the
//     position moved (a seek): the buffer is emptied and nothing in it
//     counts;
//   - the instance is fenced off from ZooKeeper (the gate paused): the
//     buffer is emptied, and the partition restarts at its marked
//     position once the gate opens (see recallOnPause).
//
// A clean stop takes nothing back: the channel closes, the handler reads
// what the buffer holds, and the drain waits for those marks, as under
// sarama. Messages() is unbuffered, so there is never anything to recall.
//
// The handler may read from the buffer while the worker empties it, so
// what the handler got need not be a prefix of what was in the buffer (it
// may get offset 3 while the worker takes 2 back). That is harmless where
// nothing more is committed or the position moves anyway; on a pause, the
// restart at the marked position, with marks refused while the buffer is
// emptied, keeps it harmless (see recallOnPause).

// recall takes back every message the output's buffer holds and returns
// how many it took. Only the worker sends on the channel, so once it
// returns the buffer stays empty until the worker sends again.
func (w *partitionWorker) recall() int {
	if w.out == nil || cap(w.out) == 0 {
		return 0
	}
	n := 0
	for {
		select {
		case _, ok := <-w.out:
			if !ok { // closed and empty
				return n
			}
			n++
		default:
			return n
		}
	}
}

// recallOnPause empties the output's buffer while the gate is paused. When
// it took something back, the partition restarts at its marked position:
// restarted is true, and to is where to fetch from. Marks are refused while
// the buffer is emptied, so no mark of a message the handler got meanwhile
// (possibly above one taken back) moves the position past a message taken
// back; the marks refused that way belong to messages delivered again from
// to. When nothing was taken back, nothing changes.
func (w *partitionWorker) recallOnPause(owned *ownedOffsets, start int64) (to int64, restarted bool) {
	owned.recalling.Store(true)
	defer owned.recalling.Store(false)
	if w.recall() == 0 {
		return 0, false
	}
	to = owned.restartAtMark()
	if to < 0 {
		to = start
	}
	w.log.Info("fenced off with messages unread in the claim's buffer: taken back; the partition restarts at its marked offset", "offset", to)
	return to, true
}

// recallWhileDraining empties the closed output's buffer while the gate is
// paused. When it took something back, the partition's position restarts
// at its mark: the drain waits for nothing handed out before, marks of
// messages the handler got meanwhile are refused, and the final commit
// stores the marked position, below everything taken back.
func (w *partitionWorker) recallWhileDraining() {
	w.owned.recalling.Store(true)
	defer w.owned.recalling.Store(false)
	if w.recall() > 0 {
		to := w.owned.restartAtMark()
		w.log.Info("fenced off while draining with messages unread in the claim's buffer: taken back; committing the marked offset", "offset", to)
	}
}
