package consumergroup

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestNewConfigInitialOffsetsAgree(t *testing.T) {
	c := NewConfig()
	if c.Consumer.Offsets.Initial != c.Offsets.Initial {
		t.Fatalf("Config.Consumer.Offsets.Initial = %d, Offsets.Initial = %d: NewConfig must make them agree",
			c.Consumer.Offsets.Initial, c.Offsets.Initial)
	}
}

// A sarama user moving a handler over relies on Consumer.Offsets.Initial;
// the handler API must refuse a config where it says something else than
// Offsets.Initial, before connecting to anything.
func TestNewConsumerGroupRefusesInitialOffsetMismatch(t *testing.T) {
	c := NewConfig()
	c.Consumer.Offsets.Initial = sarama.OffsetNewest
	c.Offsets.Initial = sarama.OffsetOldest
	start := time.Now()
	g, err := NewConsumerGroup("g", []string{"192.0.2.1:2181"}, c) // TEST-NET-1: unreachable
	if g != nil {
		_ = g.Close()
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("NewConsumerGroup took %s: it must refuse before connecting", took)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("NewConsumerGroup = %v, want a *ConfigError", err)
	}
	for _, want := range []string{"Config.Consumer.Offsets.Initial", " Offsets.Initial", "newest", "oldest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// Agreeing on newest is fine.
	c.Offsets.Initial = sarama.OffsetNewest
	g, err = NewConsumerGroup("g", []string{"192.0.2.1:2181"}, c)
	if err != nil {
		t.Fatalf("agreeing fields: %v", err)
	}
	_ = g.Close()
}

func TestValidateRefusesUnhonouredSaramaFields(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		field   string
		instead string // part of the reason: what to use instead
	}{
		{"autocommit off", func(c *Config) { c.Consumer.Offsets.AutoCommit.Enable = false }, "Config.Consumer.Offsets.AutoCommit.Enable", "Offsets.CommitInterval"},
		{"autocommit interval", func(c *Config) { c.Consumer.Offsets.AutoCommit.Interval = 5 * time.Second }, "Config.Consumer.Offsets.AutoCommit.Interval", "Offsets.CommitInterval"},
		{"deprecated commit interval", func(c *Config) { c.Consumer.Offsets.CommitInterval = 5 * time.Second }, "Config.Consumer.Offsets.CommitInterval", "Offsets.CommitInterval"},
		{"retention", func(c *Config) { c.Consumer.Offsets.Retention = time.Hour }, "Config.Consumer.Offsets.Retention", "offsets.retention.minutes"},
		{"offset retries", func(c *Config) { c.Consumer.Offsets.Retry.Max = 10 }, "Config.Consumer.Offsets.Retry.Max", "Offsets.CommitInterval"},
		{"session timeout", func(c *Config) { c.Consumer.Group.Session.Timeout = 30 * time.Second }, "Config.Consumer.Group.Session.Timeout", "Zookeeper.Timeout"},
		{"heartbeat", func(c *Config) { c.Consumer.Group.Heartbeat.Interval = time.Second }, "Config.Consumer.Group.Heartbeat.Interval", "Zookeeper.Timeout"},
		{"rebalance strategies", func(c *Config) {
			c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
		}, "Config.Consumer.Group.Rebalance.GroupStrategies", "Assignment.Strategy"},
		{"rebalance strategy (deprecated)", func(c *Config) {
			c.Consumer.Group.Rebalance.Strategy = sarama.NewBalanceStrategySticky()
		}, "Config.Consumer.Group.Rebalance.Strategy", "Assignment.Strategy"},
		{"rebalance timeout", func(c *Config) { c.Consumer.Group.Rebalance.Timeout = time.Minute * 2 }, "Config.Consumer.Group.Rebalance.Timeout", "Offsets.ProcessingTimeout"},
		{"rebalance retries", func(c *Config) { c.Consumer.Group.Rebalance.Retry.Max = 10 }, "Config.Consumer.Group.Rebalance.Retry.Max", "Claim.Budget"},
		{"rebalance backoff", func(c *Config) { c.Consumer.Group.Rebalance.Retry.Backoff = time.Second }, "Config.Consumer.Group.Rebalance.Retry.Backoff", "Claim.InitialInterval"},
		{"user data", func(c *Config) { c.Consumer.Group.Member.UserData = []byte("x") }, "Config.Consumer.Group.Member.UserData", "not supported"},
		{"instance id with a colon", func(c *Config) { c.Consumer.Group.InstanceId = "host:1" }, "Config.Consumer.Group.InstanceId", "0-9a-zA-Z._-"},
		{"instance id too long", func(c *Config) { c.Consumer.Group.InstanceId = strings.Repeat("x", 250) }, "Config.Consumer.Group.InstanceId", "at most 249"},
		{"instance id dot", func(c *Config) { c.Consumer.Group.InstanceId = ".." }, "Config.Consumer.Group.InstanceId", `".."`},
		{"no offset reset", func(c *Config) { c.Consumer.Group.ResetInvalidOffsets = false }, "Config.Consumer.Group.ResetInvalidOffsets", "Offsets.Initial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConfig()
			tt.mutate(c)
			err := c.Validate()
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *ConfigError for %s", err, tt.field)
			}
			if ce.Field != tt.field {
				t.Errorf("Field = %q, want %q (%v)", ce.Field, tt.field, err)
			}
			if !strings.Contains(ce.Reason, tt.instead) {
				t.Errorf("Reason %q does not say %q", ce.Reason, tt.instead)
			}
		})
	}
}

// Settings the library honours, or that mean nothing here, stay accepted.
func TestValidateAcceptsHonouredSaramaFields(t *testing.T) {
	c := NewConfig()
	c.Consumer.Offsets.Initial = sarama.OffsetNewest // JoinConsumerGroup: Offsets.Initial wins
	c.Consumer.Return.Errors = true                  // errors are always returned
	c.Consumer.Fetch.Min = 10
	c.Consumer.Fetch.Default = 64 << 10
	c.Consumer.Fetch.Max = 1 << 20
	c.Consumer.MaxWaitTime = 200 * time.Millisecond
	c.Consumer.MaxProcessingTime = time.Second
	c.Consumer.Retry.Backoff = time.Second
	c.Consumer.Retry.Max = 5
	c.Consumer.IsolationLevel = sarama.ReadCommitted
	c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()} // a fresh default
	c.Consumer.Group.InstanceId = "pod-0.consumers_a-1"                                                     // static membership, at sarama's default Version (< 2.3)
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
}

// Neither entry point writes to the caller's config; ClientID is set on the
// group's copy.
func TestEntryPointsLeaveCallerConfigAlone(t *testing.T) {
	c := NewConfig()
	c.Offsets.ProcessingTimeout = 0 // the join stops at validation
	if _, err := JoinConsumerGroup("g", []string{"t"}, []string{"192.0.2.1:2181"}, c); err == nil {
		t.Fatal("JoinConsumerGroup accepted an invalid config")
	}
	if c.ClientID != sarama.NewConfig().ClientID {
		t.Errorf("JoinConsumerGroup set the caller's ClientID to %q", c.ClientID)
	}

	c = NewConfig()
	g, err := NewConsumerGroup("g", []string{"192.0.2.1:2181"}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if c.ClientID != sarama.NewConfig().ClientID {
		t.Errorf("NewConsumerGroup set the caller's ClientID to %q", c.ClientID)
	}
	if g.config == c || g.config.Config == c.Config {
		t.Error("NewConsumerGroup keeps the caller's config, not a copy")
	}
	if g.config.ClientID != "g" {
		t.Errorf("the group's ClientID = %q, want the group name", g.config.ClientID)
	}
}
