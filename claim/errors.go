package claim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

// Error is the final failure of one Claim: the loop stopped on a permanent
// error or ran out of its budget (ProcessingTimeout+ExtraTime and
// ExtraAttempts). It never reports a cancelled ctx; Claim returns ctx's
// error for that.
type Error struct {
	Topic     string
	Partition int32
	// Attempts is how many times TryClaim was called.
	Attempts int
	// Elapsed is the time from the first attempt to giving up.
	Elapsed time.Duration
	// Cause is the last error seen: typically wrapping
	// kazoo.ErrPartitionClaimedByOther when the budget ran out, or the
	// permanent error that stopped the loop.
	Cause error
}

func (e *Error) Error() string {
	what := "gave up"
	if IsPermanent(e.Cause) {
		what = "permanent error"
	}
	return fmt.Sprintf("claim: %s/%d: %s after %d attempts in %v: %v",
		e.Topic, e.Partition, what, e.Attempts, e.Elapsed, e.Cause)
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }

// ErrStoppedInDoubt is wrapped, beside the context's error, in what Claim
// and Keep return when they stop (ctx done) after an attempt whose outcome
// is unknown: its request may have applied, and its reply never came (a
// dropped connection, a leader election). The owner node it would have
// created may then exist under this instance's session, and nothing else
// will delete it while the session lives: the caller cleans it up, once no
// newer claim of its own on the partition can exist (see
// kazoo.ConsumergroupInstance.ReleaseAfterLoss).
var ErrStoppedInDoubt = errors.New("claim: stopped after an attempt whose outcome is in doubt")

// doubtAfter returns whether an owner node of ours may exist after a
// failed TryClaim, given whether one might before it (doubt). Only a
// definite answer about the node clears the doubt: it is someone else's,
// or it vanished. A permanent error, or the context's, says nothing about
// it; any other error may leave one (a reply lost after the transaction
// applied; kazoo's ErrClaimContended, which it also returns with our node
// in place when the epoch kept moving under its bump).
func doubtAfter(doubt bool, err error) bool {
	switch {
	case errors.Is(err, kazoo.ErrPartitionClaimedByOther), errors.Is(err, kazoo.ErrNoNode):
		return false
	case IsPermanent(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return doubt
	}
	return true
}

// stopped returns ctx's error, wrapping ErrStoppedInDoubt too when the
// last attempt was in doubt.
func stopped(ctx context.Context, doubt bool) error {
	if doubt {
		return fmt.Errorf("%w (%w)", ctx.Err(), ErrStoppedInDoubt)
	}
	return ctx.Err()
}

// Permanent marks err as permanent: a Claim that meets it stops at once.
// It returns a *backoff.PermanentError, so errors marked by
// backoff.Permanent are recognised too. Permanent(nil) is nil.
func Permanent(err error) error { return backoff.Permanent(err) }

// IsPermanent reports whether retrying cannot help: err was marked by
// Permanent (or backoff.Permanent), or it is an authentication or ACL
// failure (kazoo.ErrNoAuth, ErrAuthFailed, ErrInvalidACL), bad arguments,
// malformed znode data, or a client that is closing.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	var pe *backoff.PermanentError
	switch {
	case errors.As(err, &pe),
		errors.Is(err, kazoo.ErrNoAuth),
		errors.Is(err, kazoo.ErrAuthFailed),
		errors.Is(err, kazoo.ErrInvalidACL),
		errors.Is(err, kazoo.ErrBadArguments),
		errors.Is(err, kazoo.ErrMalformed),
		errors.Is(err, kazoo.ErrClosing):
		return true
	}
	return false
}

// IsRetryable reports whether the same operation may succeed later: any
// non-nil error that is not permanent and not a final answer. Final answers
// are a context's error (the caller gave up) and the fencing outcomes
// kazoo.ErrClaimLost, kazoo.ErrPartitionNotClaimed and
// kazoo.ErrOffsetConflict (retrying cannot change them). That covers
// kazoo.ErrPartitionClaimedByOther, vanished nodes (kazoo.ErrNoNode),
// everything kazoo.IsRetryable accepts, a *Error whose budget ran out, and
// errors this package does not know: a claim loop that gives up early
// leaves a partition unowned, and the budget already bounds the cost.
func IsRetryable(err error) bool {
	return err != nil && !IsPermanent(err) && !isFinal(err)
}

func isFinal(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, kazoo.ErrClaimLost) || errors.Is(err, kazoo.ErrPartitionNotClaimed) ||
		errors.Is(err, kazoo.ErrOffsetConflict)
}
