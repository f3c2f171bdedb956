package worker

// The life of a partition worker is one state machine. A worker is in one
// state at a time; it leaves it when the state's own work ends or when a
// message from its inbox arrives, and Next says, for every state and every
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
//     Offsets.ProcessingTimeout (less once Close's caller stops waiting),
//     for every message handed out to be marked. It ends as soon as no mark can lead to a commit any more: the
//     claim lost, the worker abandoned, the session gone, or a conflict
//     (seek: the stored offset stands and marks are refused).
//   - committing: the final commit of what was marked. It runs to its end
//     once started; a loss it finds makes the release a release after loss.
//   - releasing: delete the owner node if it is still ours (see
//     ReleaseKind). Events change nothing any more.
//   - done: the worker has ended; its fetch source is closed.
//
// The one guard: a stop taken while the delivery gate is paused (the
// instance fenced off from ZooKeeper) is stop-fenced: the worker applies it
// as it takes a stop from its inbox.

// State is a stage in the life of a partition worker.
type State uint8

const (
	Claiming State = iota
	Consuming
	Draining
	Committing
	Releasing
	Done
	NumStates
)

var stateNames = [...]string{"claiming", "consuming", "draining", "committing", "releasing", "done"}

func (s State) String() string {
	if s < NumStates {
		return stateNames[s]
	}
	return "invalid state"
}

// Event is what moves a worker from one state to another.
type Event uint8

const (
	Finished    Event = iota // the state's own work ended
	Stop                     // stop after a drain and a final commit
	StopFenced               // a stop while delivery is paused: no drain, no final commit
	Abandon                  // stop without the drain or the final commit
	Loss                     // the claim ended under us
	Seek                     // resume at the offset the committer adopted
	Expiry                   // the session holding the claim is gone
	Pause                    // delivery paused: the instance is fenced off from ZooKeeper
	SourceEnded              // the fetch source ended on its own: reopen after what went out
	Failed                   // the state's work failed for good
	NumEvents
)

var eventNames = [...]string{"finished", "stop", "stop-fenced", "abandon", "loss", "seek", "expiry", "pause", "source-ended", "failed"}

func (e Event) String() string {
	if e < NumEvents {
		return eventNames[e]
	}
	return "invalid event"
}

// transitions is the table above: transitions[state][event] is the next
// state.
var transitions = [NumStates][NumEvents]State{
	Claiming: {
		Finished:    Consuming,
		Stop:        Done,
		StopFenced:  Done,
		Abandon:     Done,
		Loss:        Done,
		Seek:        Claiming, // nothing is tracked yet: no seek can name it
		Expiry:      Done,
		Pause:       Claiming, // nothing handed out yet
		SourceEnded: Claiming, // no source yet
		Failed:      Done,
	},
	Consuming: {
		Finished:    Draining, // nothing more to hand out (the sink refused)
		Stop:        Draining,
		StopFenced:  Releasing, // marks cannot be committed safely: what was marked is delivered again
		Abandon:     Releasing,
		Loss:        Releasing,
		Seek:        Consuming, // resume at the adopted offset
		Expiry:      Releasing,
		Pause:       Consuming, // take back the buffer; wait for the gate
		SourceEnded: Consuming, // reopen after what went out
		Failed:      Releasing,
	},
	Draining: {
		Finished:    Committing,
		Stop:        Draining, // already stopping
		StopFenced:  Draining, // already stopping
		Abandon:     Releasing,
		Loss:        Releasing,
		Seek:        Committing, // a conflict: nothing more to wait for; the stored offset stands
		Expiry:      Releasing,
		Pause:       Draining, // take back the buffer
		SourceEnded: Draining,
		Failed:      Committing,
	},
	Committing: {
		Finished:    Releasing,
		Stop:        Committing,
		StopFenced:  Committing,
		Abandon:     Releasing,
		Loss:        Releasing,
		Seek:        Releasing,
		Expiry:      Releasing,
		Pause:       Committing,
		SourceEnded: Committing,
		Failed:      Releasing,
	},
	Releasing: {
		Finished:    Done,
		Stop:        Releasing,
		StopFenced:  Releasing,
		Abandon:     Releasing,
		Loss:        Releasing,
		Seek:        Releasing,
		Expiry:      Releasing,
		Pause:       Releasing,
		SourceEnded: Releasing,
		Failed:      Done,
	},
	Done: {
		Finished:    Done,
		Stop:        Done,
		StopFenced:  Done,
		Abandon:     Done,
		Loss:        Done,
		Seek:        Done,
		Expiry:      Done,
		Pause:       Done,
		SourceEnded: Done,
		Failed:      Done,
	},
}

// Next returns the state a worker in state s goes to on event e.
func Next(s State, e Event) State {
	return transitions[s][e]
}

// ReleaseKind is how a worker in state releasing gives its claim up.
type ReleaseKind uint8

const (
	// ReleaseOwnerNode deletes the owner node, fenced by the claim's epoch.
	ReleaseOwnerNode ReleaseKind = iota
	// ReleaseAfterLoss deletes the owner node only if it is still ours:
	// the epoch moved, but a reset moves only the epoch, and nobody else
	// could delete our node.
	ReleaseAfterLoss
	// ReleaseNothing: the session holding the claim is gone (expired,
	// replaced or closed), and its owner node with it.
	ReleaseNothing
)

// ReleaseFor returns how to release a claim held by session claimSession
// when the current session is current (0 or closed: none), given whether
// the claim was lost. Only a replaced or closed session, or a moved epoch,
// proves the claim gone: a fenced instance whose session survives still
// owns its node and must delete it.
func ReleaseFor(claimSession, current int64, closed, lost bool) ReleaseKind {
	switch {
	case closed || current != claimSession:
		return ReleaseNothing
	case lost:
		return ReleaseAfterLoss
	default:
		return ReleaseOwnerNode
	}
}
