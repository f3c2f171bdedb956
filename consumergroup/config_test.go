package consumergroup

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

func TestNewConfigDefaults(t *testing.T) {
	c := NewConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("NewConfig must validate: %v", err)
	}
	// Upstream's defaults.
	if c.Offsets.Initial != sarama.OffsetOldest {
		t.Errorf("Offsets.Initial = %d, want sarama.OffsetOldest", c.Offsets.Initial)
	}
	if c.Offsets.ProcessingTimeout != 60*time.Second {
		t.Errorf("Offsets.ProcessingTimeout = %s, want 60s", c.Offsets.ProcessingTimeout)
	}
	if c.Offsets.CommitInterval != 10*time.Second {
		t.Errorf("Offsets.CommitInterval = %s, want 10s", c.Offsets.CommitInterval)
	}
	if c.Offsets.ResetOffsets {
		t.Error("Offsets.ResetOffsets must default to false")
	}
	if c.Config == nil || c.Zookeeper == nil {
		t.Fatal("embedded sarama config and Zookeeper must be set")
	}
	if c.Zookeeper.Timeout != kazoo.NewConfig().Timeout {
		t.Errorf("Zookeeper must be kazoo.NewConfig()")
	}
	// New knobs.
	if c.Claim.Budget != 0 || c.claimBudget() != 70*time.Second {
		t.Errorf("Claim.Budget = %s (effective %s), want 0 (effective 70s)", c.Claim.Budget, c.claimBudget())
	}
	if c.Claim.InitialInterval != 100*time.Millisecond || c.Claim.MaxInterval != time.Second || c.Claim.RetryCooldown != 5*time.Second {
		t.Errorf("Claim = %+v", c.Claim)
	}
	if c.Session.SelfFenceFraction != 0.5 {
		t.Errorf("Session.SelfFenceFraction = %v", c.Session.SelfFenceFraction)
	}
	if c.Assignment.Strategy != StrategySticky {
		t.Errorf("Assignment.Strategy = %q", c.Assignment.Strategy)
	}
	if !c.Fetch.Batches {
		t.Errorf("Fetch.Batches = false, want true (whole batches fetched directly)")
	}
	if len(c.Kafka.Brokers) != 0 || c.Kafka.RefreshInterval != 10*time.Second {
		t.Errorf("Kafka = %+v, want no brokers (metadata from ZooKeeper, as upstream) and a 10s refresh", c.Kafka)
	}
	if c.Metrics.LagInterval != 10*time.Second {
		t.Errorf("Metrics.LagInterval = %s, want 10s", c.Metrics.LagInterval)
	}
	if c.Static.GraceWindow != 30*time.Second {
		t.Errorf("Static.GraceWindow = %s, want 30s", c.Static.GraceWindow)
	}
	if c.Logger != nil {
		t.Error("Logger must default to nil")
	}
	// Independent instances.
	d := NewConfig()
	d.Offsets.ProcessingTimeout = time.Second
	d.ClientID = "other"
	if c.Offsets.ProcessingTimeout == time.Second || c.ClientID == "other" {
		t.Fatal("NewConfig must return independent configs")
	}
}

func TestConfigDerivedValues(t *testing.T) {
	c := NewConfig()
	c.Offsets.ProcessingTimeout = 5 * time.Minute
	if err := c.Validate(); err != nil {
		t.Fatalf("raising only ProcessingTimeout must stay valid (drop-in): %v", err)
	}
	if got := c.claimBudget(); got != 5*time.Minute+DefaultClaimMargin {
		t.Errorf("claimBudget = %s", got)
	}
	c.Claim.Budget = 6 * time.Minute
	if got := c.claimBudget(); got != 6*time.Minute {
		t.Errorf("explicit claimBudget = %s", got)
	}
}

func TestConfigLogger(t *testing.T) {
	c := NewConfig()
	l := c.logger()
	if l == nil || l.Enabled(t.Context(), slog.LevelError) {
		t.Fatal("nil Logger must give a logger that discards everything")
	}
	l.Error("must not panic")
	custom := slog.New(slog.DiscardHandler)
	c.Logger = custom
	if c.logger() != custom {
		t.Fatal("a set Logger must be used")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string // the ConfigError field expected; "" means valid
		msg   string // substring of the message
	}{
		{"defaults", func(c *Config) {}, "", ""},
		{"initial newest", func(c *Config) { c.Offsets.Initial = sarama.OffsetNewest }, "", ""},
		{"commit interval zero disables", func(c *Config) { c.Offsets.CommitInterval = 0 }, "", ""},
		{"explicit budget", func(c *Config) { c.Claim.Budget = 61 * time.Second }, "", ""},
		{"min equals max interval", func(c *Config) { c.Claim.MaxInterval = c.Claim.InitialInterval }, "", ""},
		{"strategy by id", func(c *Config) { c.Assignment.Strategy = StrategyRangeByID }, "", ""},
		{"fraction small", func(c *Config) { c.Session.SelfFenceFraction = 0.01 }, "", ""},
		{"fraction at the bound", func(c *Config) { c.Session.SelfFenceFraction = 0.6 }, "", ""},
		{"kafka brokers", func(c *Config) { c.Kafka.Brokers = []string{"127.0.0.1:9092", "kafka-2.example:9093", "[::1]:9094"} }, "", ""},
		{"kafka refresh at the bound", func(c *Config) { c.Kafka.RefreshInterval = 100 * time.Millisecond }, "", ""},
		{"lag refresh off", func(c *Config) { c.Metrics.LagInterval = 0 }, "", ""},
		{"lag refresh at the bound", func(c *Config) { c.Metrics.LagInterval = 100 * time.Millisecond }, "", ""},
		{"static member", func(c *Config) { c.Consumer.Group.InstanceId = "pod-1" }, "", ""},
		{"static member without reservation", func(c *Config) { c.Consumer.Group.InstanceId = "pod-1"; c.Static.GraceWindow = 0 }, "", ""},
		{"static grace negative", func(c *Config) { c.Static.GraceWindow = -time.Second }, "Static.GraceWindow", "Static.GraceWindow must be >= 0 (0: no reservation), got -1s"},
		{"static grace below a millisecond", func(c *Config) { c.Static.GraceWindow = time.Microsecond }, "Static.GraceWindow", "whole milliseconds"},

		{"nil sarama", func(c *Config) { c.Config = nil }, "Config", "Config (the embedded *sarama.Config) must not be nil"},
		{"invalid sarama", func(c *Config) { c.ChannelBufferSize = -1 }, "Config", "ChannelBufferSize must be >= 0"},
		{"nil zookeeper", func(c *Config) { c.Zookeeper = nil }, "Zookeeper", "Zookeeper must not be nil"},
		{"invalid zookeeper", func(c *Config) { c.Zookeeper.Timeout = 0 }, "Zookeeper", "Config.Timeout must be > 0"},
		{"initial zero", func(c *Config) { c.Offsets.Initial = 0 }, "Offsets.Initial", "Offsets.Initial must be sarama.OffsetOldest (-2) or sarama.OffsetNewest (-1), got 0"},
		{"initial positive", func(c *Config) { c.Offsets.Initial = 42 }, "Offsets.Initial", "got 42"},
		{"processing timeout zero", func(c *Config) { c.Offsets.ProcessingTimeout = 0 }, "Offsets.ProcessingTimeout", "Offsets.ProcessingTimeout must be > 0, got 0s"},
		{"processing timeout negative", func(c *Config) { c.Offsets.ProcessingTimeout = -time.Second }, "Offsets.ProcessingTimeout", "must be > 0"},
		{"commit interval negative", func(c *Config) { c.Offsets.CommitInterval = -1 }, "Offsets.CommitInterval", "Offsets.CommitInterval must be >= 0"},
		{"budget negative", func(c *Config) { c.Claim.Budget = -1 }, "Claim.Budget", "Claim.Budget must be >= 0"},
		{"budget equal", func(c *Config) { c.Claim.Budget = c.Offsets.ProcessingTimeout }, "Claim.Budget", "Claim.Budget must exceed Offsets.ProcessingTimeout (1m0s), got 1m0s"},
		{"budget below", func(c *Config) { c.Claim.Budget = time.Second }, "Claim.Budget", "must exceed Offsets.ProcessingTimeout"},
		{"initial interval zero", func(c *Config) { c.Claim.InitialInterval = 0 }, "Claim.InitialInterval", "Claim.InitialInterval must be > 0"},
		{"max interval zero", func(c *Config) { c.Claim.MaxInterval = 0 }, "Claim.MaxInterval", "Claim.MaxInterval must be > 0"},
		{"max below initial", func(c *Config) { c.Claim.MaxInterval = c.Claim.InitialInterval - 1 }, "Claim.MaxInterval", "must be >= Claim.InitialInterval"},
		{"cooldown zero", func(c *Config) { c.Claim.RetryCooldown = 0 }, "Claim.RetryCooldown", "Claim.RetryCooldown must be > 0"},
		{"fraction zero", func(c *Config) { c.Session.SelfFenceFraction = 0 }, "Session.SelfFenceFraction", "Session.SelfFenceFraction must be > 0 and <= 0.6 (a larger one could pause delivery only after the session can expire), got 0"},
		// The earliest expiry comes 0.65 timeouts after the last answered
		// probe: a fraction above 0.6 leaves too little (or nothing) for
		// scheduling.
		{"fraction above the bound", func(c *Config) { c.Session.SelfFenceFraction = 0.61 }, "Session.SelfFenceFraction", "got 0.61"},
		{"fraction 0.7", func(c *Config) { c.Session.SelfFenceFraction = 0.7 }, "Session.SelfFenceFraction", "got 0.7"},
		{"fraction just below one", func(c *Config) { c.Session.SelfFenceFraction = 0.999 }, "Session.SelfFenceFraction", "got 0.999"},
		{"fraction one", func(c *Config) { c.Session.SelfFenceFraction = 1 }, "Session.SelfFenceFraction", "got 1"},
		{"fraction NaN", func(c *Config) { c.Session.SelfFenceFraction = math.NaN() }, "Session.SelfFenceFraction", "got NaN"},
		{"strategy empty", func(c *Config) { c.Assignment.Strategy = "" }, "Assignment.Strategy", `Assignment.Strategy must be "sticky", "range-by-leader" or "range-by-id", got ""`},
		{"strategy unknown", func(c *Config) { c.Assignment.Strategy = "roundrobin" }, "Assignment.Strategy", `got "roundrobin"`},
		{"kafka broker empty", func(c *Config) { c.Kafka.Brokers = []string{""} }, "Kafka.Brokers[0]", `Kafka.Brokers[0] must be "host:port", got ""`},
		{"kafka broker without port", func(c *Config) { c.Kafka.Brokers = []string{"127.0.0.1:9092", "kafka"} }, "Kafka.Brokers[1]", `got "kafka"`},
		{"kafka broker without host", func(c *Config) { c.Kafka.Brokers = []string{":9092"} }, "Kafka.Brokers[0]", `got ":9092"`},
		{"kafka broker empty port", func(c *Config) { c.Kafka.Brokers = []string{"kafka:"} }, "Kafka.Brokers[0]", `got "kafka:"`},
		{"kafka refresh zero", func(c *Config) { c.Kafka.RefreshInterval = 0 }, "Kafka.RefreshInterval", "Kafka.RefreshInterval must be >= 100ms, got 0s"},
		{"kafka refresh too short", func(c *Config) { c.Kafka.RefreshInterval = 99 * time.Millisecond }, "Kafka.RefreshInterval", "got 99ms"},
		{"lag refresh too short", func(c *Config) { c.Metrics.LagInterval = 99 * time.Millisecond }, "Metrics.LagInterval", "Metrics.LagInterval must be 0 (no refresh) or >= 100ms, got 99ms"},
		{"lag refresh negative", func(c *Config) { c.Metrics.LagInterval = -time.Second }, "Metrics.LagInterval", "got -1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			tc.edit(c)
			before := fmt.Sprintf("%+v", *c)
			err := c.Validate()
			if fmt.Sprintf("%+v", *c) != before {
				t.Fatal("Validate must not change the config")
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error must match ErrInvalidConfig: %v", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Errorf("want a *ConfigError for %q, got %v", tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestConfigValidateNestedErrorsUnwrap(t *testing.T) {
	c := NewConfig()
	c.ChannelBufferSize = -1
	var se sarama.ConfigurationError
	if err := c.Validate(); !errors.As(err, &se) {
		t.Fatalf("the sarama error must be reachable with errors.As: %v", err)
	}
}

func TestConfigValidateReportsEveryField(t *testing.T) {
	c := NewConfig()
	c.Offsets.ProcessingTimeout = 0
	c.Offsets.Initial = 7
	c.Claim.Budget = time.Second // not compared with an invalid ProcessingTimeout
	c.Session.SelfFenceFraction = 2
	err := c.Validate()
	var fields []string
	var walk func(error)
	walk = func(e error) {
		if ce, ok := e.(*ConfigError); ok {
			fields = append(fields, ce.Field)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	want := []string{"Offsets.Initial", "Offsets.ProcessingTimeout", "Session.SelfFenceFraction"}
	if strings.Join(fields, ",") != strings.Join(want, ",") {
		t.Fatalf("fields %v, want %v (err: %v)", fields, want, err)
	}
}

func TestConfigValidateNil(t *testing.T) {
	var c *Config
	err := c.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "must not be nil") {
		t.Fatalf("got %v", err)
	}
}

// Offsets.ResetOffsets with kafka or dual storage deletes the group's
// offsets in Kafka (OffsetDelete), which needs Kafka 2.4: an older
// Config.Version would make every such join fail, so Validate refuses it,
// naming Config.Version. With zookeeper storage, or without a reset, any
// version does.
func TestConfigValidateResetVersion(t *testing.T) {
	for _, c := range []struct {
		storage OffsetStorage
		reset   bool
		version sarama.KafkaVersion
		refused bool
	}{
		{OffsetStorageKafka, true, sarama.V2_3_0_0, true},
		{OffsetStorageDual, true, sarama.V2_1_0_0, true},
		{OffsetStorageDual, true, sarama.V0_11_0_0, true},
		{OffsetStorageKafka, true, sarama.V2_4_0_0, false},
		{OffsetStorageDual, true, sarama.V3_0_0_0, false},
		{OffsetStorageZookeeper, true, sarama.V2_1_0_0, false},
		{OffsetStorageKafka, false, sarama.V2_1_0_0, false},
	} {
		cfg := NewConfig()
		cfg.Offsets.Storage = c.storage
		cfg.Offsets.ResetOffsets = c.reset
		cfg.Version = c.version
		err := cfg.Validate()
		if !c.refused {
			if err != nil {
				t.Errorf("%s, reset %v, Version %s: %v", c.storage, c.reset, c.version, err)
			}
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Config.Version" || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s, reset %v, Version %s: got %v, want a *ConfigError naming Config.Version", c.storage, c.reset, c.version, err)
			continue
		}
		for _, want := range []string{c.version.String(), "2.4.0", "Offsets.ResetOffsets", "Offsets.Storage", string(c.storage)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s, Version %s: the error does not name %q: %v", c.storage, c.version, want, err)
			}
		}
	}
}
