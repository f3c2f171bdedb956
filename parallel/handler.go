package parallel

import (
	"context"
	"time"

	"github.com/IBM/sarama"
)

// Func processes one message. ctx is cancelled when the claim's drain
// gives up (Config.DrainTimeout after the claim began to stop); fn must
// return then. It is called concurrently for messages of different keys.
type Func func(ctx context.Context, msg *sarama.ConsumerMessage) error

// handler is the sarama.ConsumerGroupHandler NewHandler returns.
type handler struct {
	fn      Func
	cfg     Config // with defaults
	invalid error  // the config's or fn's problem, returned by Setup
	// claimPoll is how often a claim whose window is full checks that the
	// session still lists it (see claimWatch); tests shorten it.
	claimPoll time.Duration
}

// NewHandler returns a sarama.ConsumerGroupHandler that runs fn on every
// message of each claim, concurrently across keys and in offset order
// within a key, and marks the contiguous prefix of finished messages (see
// the package doc). An invalid cfg or a nil fn is reported by Setup, which
// returns the error (Config.Validate's, or ErrNoFunc), so the session ends
// before anything is consumed.
func NewHandler(fn func(context.Context, *sarama.ConsumerMessage) error, cfg Config) sarama.ConsumerGroupHandler {
	h := &handler{fn: fn, cfg: cfg.withDefaults(), invalid: cfg.Validate(), claimPoll: defaultClaimPoll}
	if fn == nil && h.invalid == nil {
		h.invalid = ErrNoFunc
	}
	return h
}

// Setup implements sarama.ConsumerGroupHandler: it returns the error of an
// invalid Config or a nil fn.
func (h *handler) Setup(sarama.ConsumerGroupSession) error { return h.invalid }

// Cleanup implements sarama.ConsumerGroupHandler; it does nothing.
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim implements sarama.ConsumerGroupHandler: it runs the claim
// until its channel closes, the session's context ends or a message fails
// under FailureStop, then drains (see claimRun.drain) and returns nil or
// the *MessageError.
func (h *handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	if h.invalid != nil {
		return h.invalid
	}
	return newClaimRun(h, session, claim).run()
}
