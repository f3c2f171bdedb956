package claim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

// maxImmediate bounds consecutive attempts started without a backoff wait
// (watch wake-ups, vanished owners), so a flapping owner node or a watch
// channel that is always ready cannot make the loop spin.
const maxImmediate = 5

// Claimer claims partitions for one consumer-group instance through a
// Registry. It starts no goroutines: each Claim, Keep and Release runs in
// its caller's goroutine, and one Claimer may serve many partitions
// concurrently. The only per-partition state it keeps is the owner watch it
// armed on a partition held elsewhere, which every later attempt, Claim and
// Keep round on that partition waits on until it fires, instead of arming
// another.
type Claimer struct {
	reg     Registry
	conf    Config
	n       counters
	watches ownerWatches
}

// New returns a Claimer driving reg. A nil conf means NewConfig(); conf is
// validated and copied, so later changes to it have no effect.
func New(reg Registry, conf *Config) (*Claimer, error) {
	if reg == nil {
		return nil, errors.New("claim: Registry must not be nil")
	}
	if conf == nil {
		conf = NewConfig()
	}
	if err := conf.Validate(); err != nil {
		return nil, err
	}
	return &Claimer{reg: reg, conf: *conf}, nil
}

// Config returns a copy of the validated configuration.
func (c *Claimer) Config() Config { return c.conf }

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (c *Claimer) Stats() Stats { return c.n.snapshot() }

// Claim claims topic/partition for this instance. It tries at once; while
// another instance holds the partition it waits on a watch of the owner
// node and on a jittered backoff, whichever comes first, and tries again.
// It keeps trying for at least ProcessingTimeout+ExtraTime and
// ExtraAttempts attempts after ProcessingTimeout.
//
// It returns the claim on success; ctx.Err() as soon as ctx is done
// (wrapping ErrStoppedInDoubt too when the last attempt's outcome is
// unknown); and a *Error at once when an error is permanent, or when the
// budget runs out (then IsRetryable(err) is true and Keep would try again).
func (c *Claimer) Claim(ctx context.Context, topic string, partition int32) (*kazoo.PartitionClaim, error) {
	pc, err, _ := c.claim(ctx, topic, partition, false)
	return pc, err
}

// claim is Claim, also reporting whether its last attempt was in doubt;
// doubt is whether the last attempt before this call was (Keep's earlier
// round), which stands until this call makes one of its own.
func (c *Claimer) claim(ctx context.Context, topic string, partition int32, doubt bool) (*kazoo.PartitionClaim, error, bool) {
	if ctx.Err() != nil {
		return nil, stopped(ctx, doubt), doubt
	}
	l := loop{
		c: c, topic: topic, partition: partition,
		key:   partitionKey{topic, partition},
		start: time.Now(),
		bo:    c.newBackOff(),
		doubt: doubt,
	}
	l.ptEnd = l.start.Add(c.conf.ProcessingTimeout)
	l.deadline = l.ptEnd.Add(c.conf.ExtraTime)
	pc, err := l.run(ctx)
	return pc, err, l.doubt
}

// loop is the state of one Claim; only its caller's goroutine touches it.
type loop struct {
	c               *Claimer
	topic           string
	partition       int32
	key             partitionKey
	start           time.Time
	ptEnd, deadline time.Time
	bo              *backoff.ExponentialBackOff
	attempts        int                // TryClaim calls
	afterPT         int                // of which started at or after ptEnd
	immediate       int                // consecutive attempts started without a backoff wait
	watch           <-chan kazoo.Event // the armed owner watch, shared through c.watches
	lastErr         error
	doubt           bool // an owner node of ours may exist (see doubtAfter)
}

func (l *loop) run(ctx context.Context) (*kazoo.PartitionClaim, error) {
	n := &l.c.n
	for {
		l.attempts++
		if !time.Now().Before(l.ptEnd) {
			l.afterPT++
		}
		n.attempts.Add(1)
		pc, err := l.tryClaim(ctx)
		if err == nil && pc == nil {
			err = Permanent(errors.New("claim: Registry.TryClaim returned neither a claim nor an error"))
		}
		if err == nil {
			n.successes.Add(1)
			l.doubt = false
			return pc, nil
		}
		l.doubt = doubtAfter(l.doubt, err)
		if ctx.Err() != nil {
			return nil, stopped(ctx, l.doubt)
		}
		if IsPermanent(err) {
			return nil, l.fail(err)
		}
		l.lastErr = err

		retryNow := false
		switch {
		case errors.Is(err, kazoo.ErrNoNode):
			// The owner left in the middle of the attempt: free now.
			retryNow = true
		case errors.Is(err, kazoo.ErrPartitionClaimedByOther):
			// The attempt read the owner node with a watch: wait on it.
			var wo *watchedOwner
			if errors.As(err, &wo) {
				l.watch = wo.watch
				l.c.watches.store(l.key, wo.watch)
				break
			}
			// A watch armed earlier (by this loop, an earlier Claim or Keep
			// round, or a concurrent Claim) that has not fired still covers
			// the owner node: wait on it rather than arm another.
			if l.watch = l.c.watches.armed(l.key); l.watch != nil {
				break
			}
			owner, ch, werr := l.c.reg.WatchOwner(ctx, l.topic, l.partition)
			switch {
			case werr == nil && owner == "":
				retryNow = true // the owner left between the two calls
			case werr == nil:
				l.watch = ch // a nil channel just never fires: backoff covers it
				l.c.watches.store(l.key, ch)
			case ctx.Err() != nil:
				return nil, stopped(ctx, l.doubt)
			case errors.Is(werr, kazoo.ErrNoNode):
				retryNow = true
			case IsPermanent(werr):
				return nil, l.fail(fmt.Errorf("watching the owner: %w", werr))
			}
			// Any other watch error: fall back to the backoff timer.
		}
		if retryNow {
			n.vanishedOwners.Add(1)
			if l.immediate < maxImmediate {
				l.immediate++
				continue
			}
		}

		now := time.Now()
		if !now.Before(l.deadline) && l.afterPT >= l.c.conf.ExtraAttempts {
			return nil, l.fail(l.lastErr)
		}
		wait := l.bo.NextBackOff()
		if wait > l.c.conf.MaxInterval || wait == backoff.Stop {
			wait = l.c.conf.MaxInterval
		}
		if rem := l.deadline.Sub(now); rem > 0 && wait > rem {
			wait = rem // make the last attempt at the deadline, not after it
		}
		if err := l.wait(ctx, wait); err != nil {
			return nil, stopped(ctx, l.doubt)
		}
	}
}

// wait blocks until the backoff timer fires, the owner watch fires, or ctx
// is done. The watch is ignored after maxImmediate consecutive immediate
// attempts.
func (l *loop) wait(ctx context.Context, d time.Duration) error {
	watch := l.watch
	if l.immediate >= maxImmediate {
		watch = nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-watch:
		// Deleted, changed, or not watching any more: look again now.
		l.c.watches.fired(l.key, l.watch)
		l.watch = nil
		l.immediate++
		l.c.n.watchWakeups.Add(1)
	case <-t.C:
		l.immediate = 0
		l.c.n.backoffWakeups.Add(1)
	}
	return nil
}

// watchingRegistry is a Registry whose attempts can arm the owner watch
// with the read that finds the partition held (KazooRegistry's batches).
type watchingRegistry interface {
	TryClaimWatching(ctx context.Context, topic string, partition int32, watch bool) (*kazoo.PartitionClaim, error)
}

// tryClaim makes one attempt; it asks the registry for an owner watch with
// it only when no watch of the partition is armed and unfired, so that a
// partition held elsewhere costs one registration however many attempts
// meet it.
func (l *loop) tryClaim(ctx context.Context) (*kazoo.PartitionClaim, error) {
	if wr, ok := l.c.reg.(watchingRegistry); ok {
		return wr.TryClaimWatching(ctx, l.topic, l.partition, l.c.watches.armed(l.key) == nil)
	}
	return l.c.reg.TryClaim(ctx, l.topic, l.partition)
}

func (l *loop) fail(cause error) error {
	l.c.n.failures.Add(1)
	return &Error{
		Topic:     l.topic,
		Partition: l.partition,
		Attempts:  l.attempts,
		Elapsed:   time.Since(l.start),
		Cause:     cause,
	}
}

// Keep claims topic/partition for as long as the caller keeps ctx alive,
// for "the partition is still assigned to us". It runs Claim; on a final
// failure that IsRetryable it calls onFailure (if not nil), waits
// RetryCooldown and runs Claim again. It returns the claim, ctx's error
// once ctx is done (wrapping ErrStoppedInDoubt too when the last attempt's
// outcome is unknown, also across a cool-down), or a permanent *Error
// (which it does not pass to onFailure: each failure is reported exactly
// once).
//
// onFailure runs in Keep's goroutine and must not block; NotifyChan makes
// one that sends without blocking.
func (c *Claimer) Keep(ctx context.Context, topic string, partition int32, onFailure func(*Error)) (*kazoo.PartitionClaim, error) {
	doubt := false
	for {
		var pc *kazoo.PartitionClaim
		var err error
		pc, err, doubt = c.claim(ctx, topic, partition, doubt)
		if err == nil {
			return pc, nil
		}
		var ce *Error
		if !errors.As(err, &ce) || !IsRetryable(ce) {
			return nil, err
		}
		if onFailure != nil {
			onFailure(ce)
		}
		t := time.NewTimer(c.conf.RetryCooldown)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, stopped(ctx, doubt)
		case <-t.C:
		}
	}
}

// NotifyChan returns an onFailure callback for Keep that sends each *Error
// to ch without blocking: when ch is full (or nil) the error is dropped and
// dropped is called with it, if dropped is not nil.
func NotifyChan(ch chan<- error, dropped func(*Error)) func(*Error) {
	return func(e *Error) {
		select {
		case ch <- e:
		default:
			if dropped != nil {
				dropped(e)
			}
		}
	}
}

// Release gives up pc with the registry's epoch-fenced release. It runs on
// its own context, derived from ctx's values but not its cancellation and
// bounded by Config.ReleaseTimeout, so a cancelled caller still releases.
// Retryable errors are retried on the backoff within that bound. An error
// wrapping kazoo.ErrClaimLost means someone claimed the partition since pc:
// nothing was changed. If a retry finds the claim already gone
// (kazoo.ErrPartitionNotClaimed or kazoo.ErrNoNode), an earlier attempt
// whose reply was lost released it, and Release returns nil.
func (c *Claimer) Release(ctx context.Context, pc *kazoo.PartitionClaim) error {
	if pc == nil {
		return errors.New("claim: Release of a nil claim")
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.conf.ReleaseTimeout)
	defer cancel()
	bo := c.newBackOff()
	for attempt := 1; ; attempt++ {
		err := c.reg.Release(rctx, pc)
		gone := errors.Is(err, kazoo.ErrPartitionNotClaimed) || errors.Is(err, kazoo.ErrNoNode)
		if err == nil || (attempt > 1 && gone) {
			c.n.releases.Add(1)
			return nil
		}
		if !IsRetryable(err) || gone || rctx.Err() != nil {
			c.n.releaseFailures.Add(1)
			return fmt.Errorf("claim: release %s: %w", pc, err)
		}
		wait := bo.NextBackOff()
		if wait > c.conf.MaxInterval || wait == backoff.Stop {
			wait = c.conf.MaxInterval
		}
		t := time.NewTimer(wait)
		select {
		case <-rctx.Done():
			t.Stop()
			c.n.releaseFailures.Add(1)
			return fmt.Errorf("claim: release %s: gave up after %d attempts in %v: %w", pc, attempt, c.conf.ReleaseTimeout, err)
		case <-t.C:
		}
	}
}

func (c *Claimer) newBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.conf.InitialInterval),
		backoff.WithMaxInterval(c.conf.MaxInterval),
		backoff.WithMultiplier(c.conf.Multiplier),
		backoff.WithRandomizationFactor(c.conf.Jitter),
		backoff.WithMaxElapsedTime(0),
	)
}
