package parallel

import (
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// defaultClaimPoll is how often a claim with a full window checks that
// its session still lists it.
const defaultClaimPoll = 100 * time.Millisecond

// claimWatch sees a revoke while the claim's channel is not read. A
// revoke shows on the channel only once what it buffers is read, and a
// full window stops reading; a claim stalled behind one slow message would
// then never start its drain, and the group would give up on its marks
// and hand the partition over while fn still runs. consumergroup's
// HandlerGroup drops a claim from session.Claims() (and moves
// GenerationID) as it closes its channel, so the watch polls those while
// the window is full. Under sarama's group a revoke ends the session,
// which the claim sees on the session's context; there Claims() does not
// change and the watch never fires. It is off when the session did not
// list the claim at the start.
type claimWatch struct {
	session    sarama.ConsumerGroupSession
	claim      sarama.ConsumerGroupClaim
	every      time.Duration
	on         bool
	generation int32
	ticker     *time.Ticker // started on the first tick call
}

func newClaimWatch(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim, every time.Duration) *claimWatch {
	w := &claimWatch{session: session, claim: claim, every: every}
	w.on = w.listed()
	w.generation = session.GenerationID()
	return w
}

// tick returns the channel to poll on, nil when the watch is off.
func (w *claimWatch) tick() <-chan time.Time {
	if !w.on {
		return nil
	}
	if w.ticker == nil {
		w.ticker = time.NewTicker(w.every)
	}
	return w.ticker.C
}

// dropped reports whether the session no longer lists the claim; it reads
// Claims() only when GenerationID moved.
func (w *claimWatch) dropped() bool {
	g := w.session.GenerationID()
	if g == w.generation {
		return false
	}
	w.generation = g
	return !w.listed()
}

// listed reports whether the session's Claims() holds the claim.
func (w *claimWatch) listed() bool {
	return slices.Contains(w.session.Claims()[w.claim.Topic()], w.claim.Partition())
}

func (w *claimWatch) stop() {
	if w.ticker != nil {
		w.ticker.Stop()
	}
}
