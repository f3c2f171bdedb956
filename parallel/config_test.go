package parallel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestConfigRefused: Setup returns Validate's error naming each invalid
// field, or ErrNoFunc; the zero Config is valid.
func TestConfigRefused(t *testing.T) {
	fn := func(context.Context, *sarama.ConsumerMessage) error { return nil }
	for _, tc := range []struct {
		field string
		cfg   Config
	}{
		{"MaxInFlight", Config{MaxInFlight: -1}},
		{"NilKey", Config{NilKey: 7}},
		{"DrainTimeout", Config{DrainTimeout: -1}},
		{"Retry.InitialInterval", Config{Retry: Retry{InitialInterval: -1}}},
		{"Retry.MaxInterval", Config{Retry: Retry{MaxInterval: -1}}},
		{"Retry.MaxAttempts", Config{Retry: Retry{MaxAttempts: -1}}},
		{"Retry.MaxElapsedTime", Config{Retry: Retry{MaxElapsedTime: -1}}},
		{"OnFailure", Config{OnFailure: 9}},
		{"Retry.InitialInterval", Config{Retry: Retry{InitialInterval: 10 * time.Second}}}, // above the 5 s default max
	} {
		var ce *ConfigError
		if err := NewHandler(fn, tc.cfg).Setup(nil); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%+v: Setup returned %v, want a *ConfigError for %s", tc.cfg, err, tc.field)
		}
	}
	if err := NewHandler(fn, Config{}).Setup(nil); err != nil {
		t.Errorf("zero Config: %v", err)
	}
	if err := NewHandler(nil, Config{}).Setup(nil); !errors.Is(err, ErrNoFunc) {
		t.Errorf("nil fn: %v, want ErrNoFunc", err)
	}
}
