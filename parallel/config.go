package parallel

import (
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// Defaults of Config's fields, used where a field is zero.
const (
	// DefaultMaxInFlight is Config.MaxInFlight's default.
	DefaultMaxInFlight = 64
	// DefaultDrainTimeout is Config.DrainTimeout's default: half of
	// consumergroup's default Offsets.ProcessingTimeout (60 s), so the
	// handler gives up before the group does.
	DefaultDrainTimeout = 30 * time.Second
	// DefaultRetryInitialInterval is Config.Retry.InitialInterval's default.
	DefaultRetryInitialInterval = 100 * time.Millisecond
	// DefaultRetryMaxInterval is Config.Retry.MaxInterval's default.
	DefaultRetryMaxInterval = 5 * time.Second
	// DefaultRetryMaxAttempts is Config.Retry.MaxAttempts's default.
	DefaultRetryMaxAttempts = 5
)

// NilKeyOrder says how messages without a key (a nil Key) are ordered.
type NilKeyOrder int

const (
	// NilKeyInOrder (the default) runs messages without a key one at a
	// time, in offset order, as if they all had the same key of their own.
	NilKeyInOrder NilKeyOrder = iota
	// NilKeyAnyOrder runs each message without a key as soon as it is
	// read, concurrently with anything else.
	NilKeyAnyOrder
)

// OnFailure says what a claim does with a message whose retries are
// exhausted.
type OnFailure int

const (
	// FailureStop (the default) stops the claim: no new work starts, the
	// work in flight drains, nothing at or past the failed message is
	// marked, and ConsumeClaim returns a *MessageError.
	FailureStop OnFailure = iota
	// FailureSkip counts the message as finished: Config.OnSkip is called
	// with it and its last error, and marks move past it.
	FailureSkip
)

// Retry is how a failed message is tried again, with exponential backoff
// (github.com/cenkalti/backoff/v4, randomised by ±50 %). An attempt stops
// the retries at once when fn returns a backoff.Permanent error.
type Retry struct {
	// InitialInterval is the wait before the second attempt. Default
	// (zero): DefaultRetryInitialInterval (100 ms).
	InitialInterval time.Duration
	// MaxInterval caps the wait between attempts. Default (zero):
	// DefaultRetryMaxInterval (5 s).
	MaxInterval time.Duration
	// MaxAttempts is how many times fn runs for one message at most, the
	// first run included: 1 means no retry. Default (zero):
	// DefaultRetryMaxAttempts (5).
	MaxAttempts int
	// MaxElapsedTime, when not zero, also ends the retries once that long
	// has passed since the first attempt began. Default (zero): no limit
	// but MaxAttempts.
	MaxElapsedTime time.Duration
}

// Config configures a handler made by NewHandler. Its zero value is valid:
// every zero field means its documented default. Negative values are
// refused (by Validate, which Setup calls), never replaced.
type Config struct {
	// MaxInFlight bounds, per claim, the messages read from the claim's
	// channel and not yet marked: running, waiting behind an earlier
	// message of their key, or finished behind an unfinished one. When
	// that many are held, the claim's channel is not read until the
	// oldest is marked. So at most MaxInFlight messages run at once per
	// claim, memory is bounded whatever one key does, and a crash
	// processes at most MaxInFlight messages of a partition again.
	// Default (zero): DefaultMaxInFlight (64).
	MaxInFlight int
	// NilKey orders messages without a key. Default: NilKeyInOrder.
	NilKey NilKeyOrder
	// DrainTimeout is how long a claim that stops (its channel closed,
	// the session's context done, or a message failed) waits for the
	// messages running; then their context is cancelled and ConsumeClaim
	// returns. Keep it below the group's own drain
	// (consumergroup's Offsets.ProcessingTimeout), or the partition may
	// move while fn still runs. Default (zero): DefaultDrainTimeout (30 s).
	DrainTimeout time.Duration
	// Retry is how a failed message is tried again.
	Retry Retry
	// OnFailure is what happens once a message's retries are exhausted.
	// Default: FailureStop.
	OnFailure OnFailure
	// OnSkip, when not nil, is called with each message skipped under
	// FailureSkip and its last error, from the claim's goroutine: it
	// must not block for long, since the claim waits for it.
	OnSkip func(msg *sarama.ConsumerMessage, err error)
}

// ConfigError is a Config field that Validate refuses.
type ConfigError struct {
	Field  string // the field's path, e.g. "Retry.MaxAttempts"
	Reason string
}

// Error implements error.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("parallel: Config.%s %s", e.Field, e.Reason)
}

// Validate returns a *ConfigError naming the first invalid field, or nil.
func (c Config) Validate() error {
	switch {
	case c.MaxInFlight < 0:
		return &ConfigError{"MaxInFlight", "must be >= 0 (0: 64)"}
	case c.NilKey != NilKeyInOrder && c.NilKey != NilKeyAnyOrder:
		return &ConfigError{"NilKey", "must be NilKeyInOrder or NilKeyAnyOrder"}
	case c.DrainTimeout < 0:
		return &ConfigError{"DrainTimeout", "must be >= 0 (0: 30s)"}
	case c.Retry.InitialInterval < 0:
		return &ConfigError{"Retry.InitialInterval", "must be >= 0 (0: 100ms)"}
	case c.Retry.MaxInterval < 0:
		return &ConfigError{"Retry.MaxInterval", "must be >= 0 (0: 5s)"}
	case c.Retry.MaxAttempts < 0:
		return &ConfigError{"Retry.MaxAttempts", "must be >= 0 (0: 5)"}
	case c.Retry.MaxElapsedTime < 0:
		return &ConfigError{"Retry.MaxElapsedTime", "must be >= 0 (0: no limit)"}
	case c.OnFailure != FailureStop && c.OnFailure != FailureSkip:
		return &ConfigError{"OnFailure", "must be FailureStop or FailureSkip"}
	}
	if d := c.withDefaults(); d.Retry.InitialInterval > d.Retry.MaxInterval {
		return &ConfigError{"Retry.InitialInterval", fmt.Sprintf("(%v) must be <= Retry.MaxInterval (%v)", d.Retry.InitialInterval, d.Retry.MaxInterval)}
	}
	return nil
}

// withDefaults returns c with each zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Retry.InitialInterval == 0 {
		c.Retry.InitialInterval = DefaultRetryInitialInterval
	}
	if c.Retry.MaxInterval == 0 {
		c.Retry.MaxInterval = DefaultRetryMaxInterval
	}
	if c.Retry.MaxAttempts == 0 {
		c.Retry.MaxAttempts = DefaultRetryMaxAttempts
	}
	return c
}
