package consumergroup

// The life of a partition worker is one state machine. A worker is in one
// state at a time; it leaves it when the state's own work ends or when a
// message from its inbox arrives, and next says, for every state and every
// event, where it goes. No state ignores an event by accident: a row that
// stays put says so. Who raises each event and the one function that
// handles it: docs/worker.md.
//
//	state \ event  finished    stop        stop-fenced  abandon    loss       seek        expiry     pause       source-ended  failed
//	claiming       consuming   done        done         done       done       claiming    done       claiming    claiming      done
//	consuming      draining    draining    releasing    releasing  releasing  consuming   releasing  consuming   consuming     releasing
//	draining       committing  draining    draining     releasing  releasing  committing  releasing  draining    draining      committing
//	committing     releasing   committing  committing   releasing  releasing  releasing   releasing  committing  committing    releasing
//	releasing      done        releasing   releasing    releasing  releasing  releasing   releasing  releasing   releasing     done
//	done           done        done        done         done       done       done        done       done        done          done
//
// What the states do:
//   - claiming: wait for the partition's previous worker here to end, then
//     for the claim. Nothing is held yet, so every event but a seek or a
//     pause ends the worker.
//   - consuming: read the committed offset, track it, then fetch and hand
//     messages to the application. A seek restarts the fetch at its target
//     and stays; so does a pause, after taking back what a claim's buffer
//     holds, and the end of a fetch source (reopened after what went out).
//     A stop drains; anything that means the claim may no longer be ours
//     (abandon, loss, expiry), or that marks could not be committed safely
//     (stop-fenced), hands out nothing more and skips the drain and the
//     commit.
//   - draining: hand out nothing more and wait, up to
//     Offsets.ProcessingTimeout, for every message handed out to be
//     marked. It ends as soon as no mark can lead to a commit any more: the
//     claim lost, the worker abandoned, the session gone, or a conflict
//     (seek: the stored offset stands and marks are refused).
//   - committing: the final commit of what was marked. It runs to its end
//     once started; a loss it finds makes the release a release after loss.
//   - releasing: delete the owner node if it is still ours (see
//     releaseKind). Events change nothing any more.
//   - done: the worker has ended; its fetch source is closed.
//
// The one guard: a stop taken while the delivery gate is paused (the
// instance fenced off from ZooKeeper) is stop-fenced (see handle).

// workerState is a stage in the life of a partition worker.
type workerState uint8

const (
	stateClaiming workerState = iota
	stateConsuming
	stateDraining
	stateCommitting
	stateReleasing
	stateDone
	numWorkerStates
)

var workerStateNames = [...]string{"claiming", "consuming", "draining", "committing", "releasing", "done"}

func (s workerState) String() string {
	if s < numWorkerStates {
		return workerStateNames[s]
	}
	return "invalid state"
}

// workerEvent is what moves a worker from one state to another.
type workerEvent uint8

const (
	eventFinished    workerEvent = iota // the state's own work ended
	eventStop                           // stop after a drain and a final commit
	eventStopFenced                     // a stop while delivery is paused: no drain, no final commit
	eventAbandon                        // stop without the drain or the final commit
	eventLoss                           // the claim ended under us
	eventSeek                           // resume at the offset the committer adopted
	eventExpiry                         // the session holding the claim is gone
	eventPause                          // delivery paused: the instance is fenced off from ZooKeeper
	eventSourceEnded                    // the fetch source ended on its own: reopen after what went out
	eventFailed                         // the state's work failed for good
	numWorkerEvents
)

var workerEventNames = [...]string{"finished", "stop", "stop-fenced", "abandon", "loss", "seek", "expiry", "pause", "source-ended", "failed"}

func (e workerEvent) String() string {
	if e < numWorkerEvents {
		return workerEventNames[e]
	}
	return "invalid event"
}

// transitions is the table above: transitions[state][event] is the next
// state.
var transitions = [numWorkerStates][numWorkerEvents]workerState{
	stateClaiming: {
		eventFinished:    stateConsuming,
		eventStop:        stateDone,
		eventStopFenced:  stateDone,
		eventAbandon:     stateDone,
		eventLoss:        stateDone,
		eventSeek:        stateClaiming, // nothing is tracked yet: no seek can name it
		eventExpiry:      stateDone,
		eventPause:       stateClaiming, // nothing handed out yet
		eventSourceEnded: stateClaiming, // no source yet
		eventFailed:      stateDone,
	},
	stateConsuming: {
		eventFinished:    stateDraining, // nothing more to hand out (the sink refused)
		eventStop:        stateDraining,
		eventStopFenced:  stateReleasing, // marks cannot be committed safely: what was marked is delivered again
		eventAbandon:     stateReleasing,
		eventLoss:        stateReleasing,
		eventSeek:        stateConsuming, // resume at the adopted offset
		eventExpiry:      stateReleasing,
		eventPause:       stateConsuming, // take back the buffer; wait for the gate
		eventSourceEnded: stateConsuming, // reopen after what went out
		eventFailed:      stateReleasing,
	},
	stateDraining: {
		eventFinished:    stateCommitting,
		eventStop:        stateDraining, // already stopping
		eventStopFenced:  stateDraining, // already stopping
		eventAbandon:     stateReleasing,
		eventLoss:        stateReleasing,
		eventSeek:        stateCommitting, // a conflict: nothing more to wait for; the stored offset stands
		eventExpiry:      stateReleasing,
		eventPause:       stateDraining, // take back the buffer
		eventSourceEnded: stateDraining,
		eventFailed:      stateCommitting,
	},
	stateCommitting: {
		eventFinished:    stateReleasing,
		eventStop:        stateCommitting,
		eventStopFenced:  stateCommitting,
		eventAbandon:     stateReleasing,
		eventLoss:        stateReleasing,
		eventSeek:        stateReleasing,
		eventExpiry:      stateReleasing,
		eventPause:       stateCommitting,
		eventSourceEnded: stateCommitting,
		eventFailed:      stateReleasing,
	},
	stateReleasing: {
		eventFinished:    stateDone,
		eventStop:        stateReleasing,
		eventStopFenced:  stateReleasing,
		eventAbandon:     stateReleasing,
		eventLoss:        stateReleasing,
		eventSeek:        stateReleasing,
		eventExpiry:      stateReleasing,
		eventPause:       stateReleasing,
		eventSourceEnded: stateReleasing,
		eventFailed:      stateDone,
	},
	stateDone: {
		eventFinished:    stateDone,
		eventStop:        stateDone,
		eventStopFenced:  stateDone,
		eventAbandon:     stateDone,
		eventLoss:        stateDone,
		eventSeek:        stateDone,
		eventExpiry:      stateDone,
		eventPause:       stateDone,
		eventSourceEnded: stateDone,
		eventFailed:      stateDone,
	},
}

// next returns the state a worker in state s goes to on event e.
func next(s workerState, e workerEvent) workerState {
	return transitions[s][e]
}

// releaseKind is how a worker in state releasing gives its claim up.
type releaseKind uint8

const (
	// releaseOwnerNode deletes the owner node, fenced by the claim's epoch.
	releaseOwnerNode releaseKind = iota
	// releaseAfterLoss deletes the owner node only if it is still ours:
	// the epoch moved, but a reset moves only the epoch, and nobody else
	// could delete our node.
	releaseAfterLoss
	// releaseNothing: the session holding the claim is gone (expired,
	// replaced or closed), and its owner node with it.
	releaseNothing
)

// releaseFor returns how to release a claim held by session claimSession
// when the current session is current (0 or closed: none), given whether
// the claim was lost. Only a replaced or closed session, or a moved epoch,
// proves the claim gone: a fenced instance whose session survives still
// owns its node and must delete it.
func releaseFor(claimSession, current int64, closed, lost bool) releaseKind {
	switch {
	case closed || current != claimSession:
		return releaseNothing
	case lost:
		return releaseAfterLoss
	default:
		return releaseOwnerNode
	}
}
