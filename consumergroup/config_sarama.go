package consumergroup

import (
	"fmt"

	"github.com/IBM/sarama"
)

// The embedded sarama config's consumer-group settings: sarama's group
// protocol is not used here, so a value moved away from sarama's default
// would be silently ignored. Validate refuses it instead, naming what to use
// here. docs/sarama-config.md has the whole table.

// validateSaramaConsumer reports through bad every Consumer field of c (not
// nil) that is set away from sarama.NewConfig()'s default but that this
// library does not honour.
func validateSaramaConsumer(c *sarama.Config, bad func(field, format string, args ...any)) {
	def := sarama.NewConfig()
	g, dg := &c.Consumer.Group, &def.Consumer.Group
	o, do := &c.Consumer.Offsets, &def.Consumer.Offsets

	if !o.AutoCommit.Enable {
		// sarama then commits only on session.Commit(); here a partition
		// that leaves always commits its marks, which a clean hand-over
		// needs.
		bad("Config.Consumer.Offsets.AutoCommit.Enable", "false is not honoured: marked offsets are committed every Offsets.CommitInterval and when a partition is released;"+
			" to commit only on FlushOffsets or session.Commit() (and at release) set Offsets.CommitInterval = 0 and leave this true")
	}
	if o.AutoCommit.Interval != do.AutoCommit.Interval {
		bad("Config.Consumer.Offsets.AutoCommit.Interval", "is not used: set Offsets.CommitInterval instead, got %s", o.AutoCommit.Interval)
	}
	if o.CommitInterval != do.CommitInterval {
		bad("Config.Consumer.Offsets.CommitInterval", "(deprecated in sarama) is not used: set Offsets.CommitInterval instead, got %s", o.CommitInterval)
	}
	if o.Retention != do.Retention {
		bad("Config.Consumer.Offsets.Retention", "is not honoured: offsets in ZooKeeper never expire, and Kafka keeps the group's offsets for the broker's offsets.retention.minutes; got %s", o.Retention)
	}
	if o.Retry.Max != do.Retry.Max {
		bad("Config.Consumer.Offsets.Retry.Max", "is not used: a failed commit is retried within its round and again at the next one (Offsets.CommitInterval); got %d", o.Retry.Max)
	}

	if g.Session.Timeout != dg.Session.Timeout {
		bad("Config.Consumer.Group.Session.Timeout", "is not used: membership is a ZooKeeper session, set Zookeeper.Timeout instead; got %s", g.Session.Timeout)
	}
	if g.Heartbeat.Interval != dg.Heartbeat.Interval {
		bad("Config.Consumer.Group.Heartbeat.Interval", "is not used: the ZooKeeper client keeps its session alive on its own (set Zookeeper.Timeout; Session.SelfFenceFraction sets when delivery pauses); got %s", g.Heartbeat.Interval)
	}
	if g.Rebalance.Strategy != nil {
		bad("Config.Consumer.Group.Rebalance.Strategy", "is not used: set Assignment.Strategy instead")
	}
	if !sameStrategies(g.Rebalance.GroupStrategies, dg.Rebalance.GroupStrategies) {
		bad("Config.Consumer.Group.Rebalance.GroupStrategies", "is not used: set Assignment.Strategy (%q, %q or %q) instead", StrategySticky, StrategyRangeByLeader, StrategyRangeByID)
	}
	if g.Rebalance.Timeout != dg.Rebalance.Timeout {
		bad("Config.Consumer.Group.Rebalance.Timeout", "is not used: a partition that moves waits Offsets.ProcessingTimeout for marks, and its next owner tries to claim it for Claim.Budget; got %s", g.Rebalance.Timeout)
	}
	if g.Rebalance.Retry.Max != dg.Rebalance.Retry.Max {
		bad("Config.Consumer.Group.Rebalance.Retry.Max", "is not used: claims are retried for Claim.Budget, then again after Claim.RetryCooldown; got %d", g.Rebalance.Retry.Max)
	}
	if g.Rebalance.Retry.Backoff != dg.Rebalance.Retry.Backoff {
		bad("Config.Consumer.Group.Rebalance.Retry.Backoff", "is not used: set Claim.InitialInterval and Claim.MaxInterval instead; got %s", g.Rebalance.Retry.Backoff)
	}
	if g.Member.UserData != nil {
		bad("Config.Consumer.Group.Member.UserData", "is not supported: a member's ZooKeeper registration carries no user data")
	}
	if g.InstanceId != "" {
		if reason := instanceIDProblem(g.InstanceId); reason != "" {
			bad("Config.Consumer.Group.InstanceId", "%s; got %q", reason, g.InstanceId)
		}
	}
	if g.ResetInvalidOffsets != dg.ResetInvalidOffsets {
		bad("Config.Consumer.Group.ResetInvalidOffsets", "false is not honoured: an out-of-range stored offset is always reported on Errors() and restarts at Offsets.Initial")
	}
}

// maxInstanceIDLength is the longest Consumer.Group.InstanceId accepted:
// Kafka's limit, which sarama checks too.
const maxInstanceIDLength = 249

// instanceIDProblem says what makes id unusable as a static member's id,
// or "". The rule is Kafka's (and sarama's): 1 to 249 of [0-9a-zA-Z._-],
// neither "." nor "..". Such a name is a legal znode name, and it never
// collides with an upstream id ("<host>:<uuid>" has a colon).
func instanceIDProblem(id string) string {
	switch {
	case id == "." || id == "..":
		return `must not be "." or ".."`
	case len(id) > maxInstanceIDLength:
		return fmt.Sprintf("must be at most %d characters long", maxInstanceIDLength)
	}
	for _, r := range id {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("must consist of 0-9a-zA-Z._- only (Kafka's rule), not %q", r)
		}
	}
	return ""
}

// validateSarama is c.Validate without its check of
// Consumer.Group.InstanceId, which asks for a Version >= 2.3 that only
// Kafka's group protocol needs; instanceIDProblem checks the id instead.
func validateSarama(c *sarama.Config) error {
	if c.Consumer.Group.InstanceId == "" {
		return c.Validate()
	}
	cp := *c
	cp.Consumer.Group.InstanceId = ""
	return cp.Validate()
}

// sameStrategies reports whether a and b name the same balance strategies
// in the same order (sarama's strategies are values without equality).
func sameStrategies(a, b []sarama.BalanceStrategy) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == nil || b[i] == nil || a[i].Name() != b[i].Name() {
			return false
		}
	}
	return true
}

// initialOffsetMismatch returns a *ConfigError naming both initial-offset
// fields when c (valid) has them disagree, and nil otherwise.
func (c *Config) initialOffsetMismatch() error {
	if c.Consumer.Offsets.Initial == c.Offsets.Initial {
		return nil
	}
	return &ConfigError{
		Field: "Config.Consumer.Offsets.Initial",
		Reason: fmt.Sprintf("(%s) disagrees with Offsets.Initial (%s): set both to the same value (NewConfig sets both to %s)",
			initialName(c.Consumer.Offsets.Initial), initialName(c.Offsets.Initial), initialName(DefaultInitialOffset)),
	}
}

// initialName names sarama.OffsetOldest and sarama.OffsetNewest.
func initialName(o int64) string {
	switch o {
	case sarama.OffsetOldest:
		return "oldest"
	case sarama.OffsetNewest:
		return "newest"
	}
	return fmt.Sprint(o)
}

// clone returns a copy of c, with its own copy of the embedded sarama
// config, so the group can adjust settings without writing to the
// caller's config. The copies share sarama's reference fields (metric
// registry, interceptors, TLS config), which the group only reads.
func (c *Config) clone() *Config {
	cp := *c
	if c.Config != nil {
		s := *c.Config
		cp.Config = &s
	}
	return &cp
}

// groupConfig is the copy of config (nil: NewConfig()) a group runs with:
// ClientID is name when it still has sarama's default, as upstream sets it.
func groupConfig(name string, config *Config) *Config {
	if config == nil {
		config = NewConfig()
	}
	config = config.clone()
	if config.Config != nil && config.ClientID == sarama.NewConfig().ClientID {
		config.ClientID = name
	}
	return config
}
