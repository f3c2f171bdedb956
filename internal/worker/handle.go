package worker

// handle acts on event e taken in state st, and returns the event the
// table moves on: e itself, or stop-fenced for a stop taken while the
// delivery gate is paused (the table's one guard). In consuming, a seek
// and a pause that took messages back also say where the fetch restarts
// (restart, at resume; start is where the current fetch started). Every
// message of the inbox, and pump's expiry, is acted on here and nowhere
// else: see docs/worker.md, "Event map".
func (w *Worker) handle(st State, m Message, start int64) (e Event, resume int64, restart bool) {
	e = m.Event
	if e == Stop && w.fencedOff() {
		e = StopFenced
	}
	switch e {
	case Stop:
		// A clean stop: the handler reads what the buffer holds.
	case StopFenced:
		w.onStopFenced(st)
	case Pause:
		resume, restart = w.onPause(st, start)
	case Seek:
		resume, restart = w.onSeek(st, m.SeekTo)
	case Abandon, Loss, Expiry:
		w.onClaimInDoubt(st)
	}
	return e, resume, restart
}

// fencedOff reports whether the delivery gate is paused: the instance is
// fenced off from ZooKeeper.
func (w *Worker) fencedOff() bool {
	return w.deps.Gate != nil && w.deps.Gate.Paused()
}

// onStopFenced: waiting for marks and a final commit would only hold up a
// rebalance or Close (what was marked is delivered again). The release is
// still tried: if the session survives, the owner node is still ours.
func (w *Worker) onStopFenced(st State) {
	if st == Consuming {
		w.log.Warn("stopping while fenced off from ZooKeeper: no final commit")
		w.recallBeforeRelease(w.owned)
	}
}

// onPause takes back what a claim's buffer holds while delivery is paused.
// Consuming, the fetch restarts at the marked offset when anything was
// taken back (see recallOnPause); draining, the final commit stores the
// marked offset.
func (w *Worker) onPause(st State, start int64) (resume int64, restart bool) {
	if w.owned == nil || w.out == nil || cap(w.out) == 0 {
		return 0, false // nothing handed out, or nothing a buffer could hold
	}
	switch st {
	case Consuming:
		return w.recallOnPause(w.owned, start)
	case Draining:
		w.recallWhileDraining()
	}
	return 0, false
}

// onSeek follows a stored offset the committer adopted (a conflict).
// Consuming, the fetch restarts there; draining, nothing marked can be
// committed any more, and the buffer is taken back.
func (w *Worker) onSeek(st State, to int64) (resume int64, restart bool) {
	if w.owned == nil {
		return 0, false
	}
	switch st {
	case Consuming:
		w.recall() // from the old position
		w.owned.Restart(to)
		// What a take-back outside pump took before is from the old
		// position too: the pause it posted again must not restart below
		// the adopted offset. (handing is held, or no take-back runs.)
		// Nor what another partition's take-back took of a shared buffer.
		w.takenBack = -1
		w.takeOvertaken()
		return to, true
	case Draining:
		w.recallBeforeRelease(w.owned)
	}
	return 0, false
}

// onClaimInDoubt: the claim may no longer be ours (abandon, loss, expiry),
// so nothing the buffer holds may be read any more.
func (w *Worker) onClaimInDoubt(st State) {
	if st == Consuming || st == Draining {
		w.recallBeforeRelease(w.owned)
	}
}
