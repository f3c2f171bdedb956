package claim

import (
	"strings"
	"testing"
	"time"
)

func TestNewConfigIsValid(t *testing.T) {
	if err := NewConfig().Validate(); err != nil {
		t.Fatalf("NewConfig().Validate() = %v", err)
	}
	c, err := New(newScripted(t), nil)
	if err != nil {
		t.Fatalf("New(reg, nil): %v", err)
	}
	if c.Config() != *NewConfig() {
		t.Errorf("New(reg, nil) config %+v, want the defaults", c.Config())
	}
}

// Every invalid field is rejected with a message that names it.
func TestConfigValidateNamesField(t *testing.T) {
	cases := []struct {
		field string
		set   func(*Config)
	}{
		{"Config.ProcessingTimeout", func(c *Config) { c.ProcessingTimeout = 0 }},
		{"Config.ExtraTime", func(c *Config) { c.ExtraTime = -time.Second }},
		{"Config.ExtraAttempts", func(c *Config) { c.ExtraAttempts = -1 }},
		{"Config.InitialInterval", func(c *Config) { c.InitialInterval = 0 }},
		{"Config.MaxInterval must be >= InitialInterval", func(c *Config) { c.MaxInterval = c.InitialInterval / 2 }},
		{"Config.MaxInterval must be <= ProcessingTimeout", func(c *Config) { c.MaxInterval = 2 * c.ProcessingTimeout }},
		{"Config.Multiplier", func(c *Config) { c.Multiplier = 0.5 }},
		{"Config.Jitter", func(c *Config) { c.Jitter = 1 }},
		{"Config.Jitter", func(c *Config) { c.Jitter = -0.1 }},
		{"Config.RetryCooldown", func(c *Config) { c.RetryCooldown = 0 }},
		{"Config.ReleaseTimeout", func(c *Config) { c.ReleaseTimeout = 0 }},
	}
	for _, tc := range cases {
		c := NewConfig()
		tc.set(c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.HasPrefix(err.Error(), "claim: ") {
			t.Errorf("%s: Validate() = %v, want an error naming it", tc.field, err)
		}
		if _, nerr := New(newScripted(t), c); nerr == nil || nerr.Error() != err.Error() {
			t.Errorf("%s: New = %v, want %v", tc.field, nerr, err)
		}
	}
	var nilConf *Config
	if err := nilConf.Validate(); err == nil {
		t.Error("nil Config validated")
	}
	if _, err := New(nil, nil); err == nil || !strings.Contains(err.Error(), "Registry") {
		t.Errorf("New(nil, nil) = %v, want an error naming the Registry", err)
	}
}

// New copies the config: changing it later has no effect.
func TestNewCopiesConfig(t *testing.T) {
	conf := testConfig()
	c := newClaimer(t, newScripted(t), conf)
	conf.ProcessingTimeout = 0
	if c.Config().ProcessingTimeout != testConfig().ProcessingTimeout {
		t.Error("Claimer shares its caller's Config")
	}
}
