package claim

import (
	"fmt"
	"time"
)

// Config tunes a Claimer. Build it with NewConfig and change fields; New
// validates it once and never clamps a value silently.
type Config struct {
	// ProcessingTimeout is how long the previous owner of a partition may
	// drain (finish its last batch, commit) before it releases. Claim keeps
	// trying at least this long. Use the same value as the group's
	// Offsets.ProcessingTimeout. Default 60s; must be > 0.
	ProcessingTimeout time.Duration

	// ExtraTime is how long Claim keeps trying after ProcessingTimeout,
	// covering the previous owner's rebalance lag and its final commit.
	// Default 10s; must be > 0.
	ExtraTime time.Duration

	// ExtraAttempts is the least number of attempts Claim makes after
	// ProcessingTimeout has passed, even if ExtraTime is already used up
	// (say by a stalled connection). Default 3; must be >= 0.
	ExtraAttempts int

	// InitialInterval is the first backoff wait between attempts; waits then
	// grow by Multiplier up to MaxInterval. Default 50ms; must be > 0.
	InitialInterval time.Duration

	// MaxInterval is the longest wait between two attempts, jitter included:
	// a missed watch costs at most this. Default 1s; must be >=
	// InitialInterval and <= ProcessingTimeout.
	MaxInterval time.Duration

	// Multiplier grows the backoff interval after each wait. Default 1.5;
	// must be >= 1.
	Multiplier float64

	// Jitter is the backoff's randomization factor: each wait is drawn from
	// [interval*(1-Jitter), interval*(1+Jitter)] and then capped at
	// MaxInterval, so that claimants do not retry in lockstep. Default 0.5;
	// must be in [0, 1).
	Jitter float64

	// RetryCooldown is how long Keep waits after a final failure before it
	// starts a new Claim. Default 5s; must be > 0.
	RetryCooldown time.Duration

	// ReleaseTimeout bounds Release, which runs on its own context so that a
	// cancelled caller still releases. Retryable errors are retried within
	// it. Default 10s; must be > 0.
	ReleaseTimeout time.Duration
}

// NewConfig returns a Config with every field at its documented default.
func NewConfig() *Config {
	return &Config{
		ProcessingTimeout: 60 * time.Second,
		ExtraTime:         10 * time.Second,
		ExtraAttempts:     3,
		InitialInterval:   50 * time.Millisecond,
		MaxInterval:       time.Second,
		Multiplier:        1.5,
		Jitter:            0.5,
		RetryCooldown:     5 * time.Second,
		ReleaseTimeout:    10 * time.Second,
	}
}

// Validate reports the first invalid field, named as Config.<Field>.
func (c *Config) Validate() error {
	switch {
	case c == nil:
		return fmt.Errorf("claim: Config must not be nil")
	case c.ProcessingTimeout <= 0:
		return configErr("ProcessingTimeout must be > 0, got %v", c.ProcessingTimeout)
	case c.ExtraTime <= 0:
		return configErr("ExtraTime must be > 0, got %v", c.ExtraTime)
	case c.ExtraAttempts < 0:
		return configErr("ExtraAttempts must be >= 0, got %d", c.ExtraAttempts)
	case c.InitialInterval <= 0:
		return configErr("InitialInterval must be > 0, got %v", c.InitialInterval)
	case c.MaxInterval < c.InitialInterval:
		return configErr("MaxInterval must be >= InitialInterval (%v), got %v", c.InitialInterval, c.MaxInterval)
	case c.MaxInterval > c.ProcessingTimeout:
		return configErr("MaxInterval must be <= ProcessingTimeout (%v), got %v", c.ProcessingTimeout, c.MaxInterval)
	case !(c.Multiplier >= 1):
		return configErr("Multiplier must be >= 1, got %v", c.Multiplier)
	case !(c.Jitter >= 0 && c.Jitter < 1):
		return configErr("Jitter must be in [0, 1), got %v", c.Jitter)
	case c.RetryCooldown <= 0:
		return configErr("RetryCooldown must be > 0, got %v", c.RetryCooldown)
	case c.ReleaseTimeout <= 0:
		return configErr("ReleaseTimeout must be > 0, got %v", c.ReleaseTimeout)
	}
	return nil
}

func configErr(format string, args ...any) error {
	return fmt.Errorf("claim: Config."+format, args...)
}
