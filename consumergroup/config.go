package consumergroup

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// Defaults applied by NewConfig. The first three are upstream's.
const (
	// DefaultInitialOffset is Offsets.Initial's default: start at the oldest
	// available message when the group has no stored offset.
	DefaultInitialOffset = sarama.OffsetOldest

	// DefaultProcessingTimeout is Offsets.ProcessingTimeout's default.
	DefaultProcessingTimeout = 60 * time.Second

	// DefaultCommitInterval is Offsets.CommitInterval's default.
	DefaultCommitInterval = 10 * time.Second

	// DefaultClaimMargin is how much longer than Offsets.ProcessingTimeout
	// the claim loop keeps trying when Claim.Budget is 0: the previous owner
	// may drain for up to ProcessingTimeout, then needs time to commit and
	// release.
	DefaultClaimMargin = 10 * time.Second

	// DefaultClaimInitialInterval is Claim.InitialInterval's default.
	DefaultClaimInitialInterval = 100 * time.Millisecond

	// DefaultClaimMaxInterval is Claim.MaxInterval's default.
	DefaultClaimMaxInterval = 1 * time.Second

	// DefaultClaimRetryCooldown is Claim.RetryCooldown's default.
	DefaultClaimRetryCooldown = 5 * time.Second

	// DefaultSelfFenceFraction is Session.SelfFenceFraction's default.
	DefaultSelfFenceFraction = 0.5

	// DefaultAssignmentStrategy is Assignment.Strategy's default:
	// StrategySticky, which is upstream's assignment until every member
	// offers it, so mixed fleets agree during a rolling upgrade.
	DefaultAssignmentStrategy = StrategySticky

	// DefaultKafkaRefreshInterval is Kafka.RefreshInterval's default.
	DefaultKafkaRefreshInterval = 10 * time.Second

	// DefaultLagInterval is Metrics.LagInterval's default.
	DefaultLagInterval = 10 * time.Second

	// DefaultStaticGraceWindow is Static.GraceWindow's default: long
	// enough for a pod to be replaced in a rolling deploy.
	DefaultStaticGraceWindow = 30 * time.Second
)

// maxMessagesBuffer is the largest Messages.Buffer Validate accepts.
const maxMessagesBuffer = 1 << 20

// minLagInterval is the shortest Metrics.LagInterval Validate accepts
// (other than 0): each refresh is a request to every leader of an owned
// partition.
const minLagInterval = 100 * time.Millisecond

// minKafkaRefreshInterval is the shortest Kafka.RefreshInterval Validate
// accepts: each refresh is a metadata request to a broker.
const minKafkaRefreshInterval = 100 * time.Millisecond

// maxSelfFenceFraction is the largest Session.SelfFenceFraction Validate
// accepts. The earliest expiry comes 0.65 timeouts after the last answered
// probe was sent (a quarter for the leader to hear of a client of a
// follower, a tenth between probes; see docs/fence.md); 0.05 is left for the
// timer, network jitter and a hand-over in progress.
const maxSelfFenceFraction = 0.6

// Config configures a ConsumerGroup. It has upstream's shape (the embedded
// sarama config, Zookeeper, Offsets) plus the sub-structs Claim, Session,
// Kafka, Assignment, Fetch, Metrics and Static and a Logger. Build it with NewConfig, change what
// you need, and pass it to JoinConsumerGroup, which calls Validate. Every
// field's default is the one NewConfig sets; Validate never replaces an
// invalid value with a default, it reports it. The group never writes to
// it: it runs on a copy.
//
// Of the embedded sarama config's consumer settings, some are honoured,
// some have a counterpart here, and some mean nothing here:
// docs/sarama-config.md has the table. Validate refuses every one this
// library does not honour when it is moved away from sarama.NewConfig()'s
// default, naming what to use instead.
type Config struct {
	// Config is the sarama configuration of the Kafka client and consumer.
	// Default sarama.NewConfig() with Consumer.Offsets.Initial set to
	// Offsets.Initial's default. Must not be nil; Validate calls its
	// Validate, and refuses consumer-group settings that are not honoured
	// (see docs/sarama-config.md).
	*sarama.Config

	// Zookeeper configures the ZooKeeper connection (session timeout, chroot,
	// credentials). Default kazoo.NewConfig(). Must not be nil; Validate calls
	// its Validate.
	Zookeeper *kazoo.Config

	// Offsets holds upstream's offset settings, with upstream's defaults.
	Offsets struct {
		// Initial is where a partition with no stored offset starts: either
		// sarama.OffsetOldest or sarama.OffsetNewest. It is also where a
		// partition whose stored offset is out of range restarts. Default
		// sarama.OffsetOldest. The embedded Consumer.Offsets.Initial must
		// agree with it for NewConsumerGroup; JoinConsumerGroup, as
		// upstream, uses this one and logs that the other is ignored.
		Initial int64

		// ProcessingTimeout is how long a partition that stops being consumed
		// here (rebalance, Close) waits for the application to mark the
		// messages already delivered before committing and releasing it.
		// Default 60 s. Must be > 0.
		ProcessingTimeout time.Duration

		// CommitInterval is the interval between commits of marked offsets
		// to ZooKeeper. 0 disables periodic commits: offsets are then
		// committed only by FlushOffsets and when a partition is released
		// (as upstream). Default 10 s. Must be >= 0.
		CommitInterval time.Duration

		// ResetOffsets deletes the group's stored offsets when joining, so
		// consumption restarts at Initial: in ZooKeeper, and with Storage
		// kafka or dual also the group's offsets in Kafka. Default false.
		//
		// With zookeeper storage the reset fences running members (each
		// partition's epoch moves with its offset), so it may be made
		// while they run. Kafka's offsets carry no epoch, so with kafka or
		// dual storage a running member could read the old Kafka offset
		// back after the reset (and in dual mode write it to ZooKeeper
		// again): the join is refused, with ErrResetWhileMembersRun, while
		// any other member of the group is registered, as Kafka's
		// kafka-consumer-groups.sh --reset-offsets refuses a group with
		// active members. It then needs Config.Version >= 2.4.0 (Kafka's
		// OffsetDelete), which Validate checks.
		ResetOffsets bool

		// Storage is where offsets are committed and read:
		// OffsetStorageZookeeper ("zookeeper", the default: ZooKeeper's
		// /consumers/<group>/offsets, as upstream), OffsetStorageKafka
		// ("kafka": Kafka's committed offsets of the group, which Kafka's
		// tools and broker-coordinated consumers read) or OffsetStorageDual
		// ("dual": both, ZooKeeper first, each partition starting at the
		// higher of the two; the step between the other two in a rolling
		// migration). ZooKeeper coordinates the group whatever the storage.
		// Default "zookeeper".
		Storage OffsetStorage
	}

	// Claim configures the claim loop that takes ownership of each partition
	// assigned to this instance.
	Claim struct {
		// Budget is how long the claim loop keeps trying to claim a
		// partition before reporting the failure on Errors(). It must exceed
		// Offsets.ProcessingTimeout, since the previous owner may drain that
		// long before releasing. 0 (the default) means
		// Offsets.ProcessingTimeout + DefaultClaimMargin (10 s), so the budget
		// follows ProcessingTimeout. Must be >= 0.
		Budget time.Duration

		// InitialInterval is the first interval between re-checks of a
		// partition still owned by someone else; the loop also wakes as soon
		// as the owner node is deleted. Default 100 ms. Must be > 0.
		InitialInterval time.Duration

		// MaxInterval caps the growing, jittered interval between re-checks:
		// a missed deletion costs at most this much. Default 1 s. Must be
		// >= InitialInterval.
		MaxInterval time.Duration

		// RetryCooldown is how long to wait, after a claim ran out of Budget,
		// before trying again while the partition is still assigned here.
		// Default 5 s. Must be > 0.
		RetryCooldown time.Duration
	}

	// Session configures the reaction to trouble with the ZooKeeper session.
	Session struct {
		// SelfFenceFraction: once the ZooKeeper leader has not vouched for
		// the session for this fraction of the session timeout, the group
		// stops delivering messages of the partitions it owns, before the
		// session can expire and another instance can claim them; delivery
		// resumes when the leader vouches for the same session again.
		//
		// The fence trusts only answers the leader stands behind (a sync,
		// which a follower cut off from the leader cannot answer, unlike a
		// read), measures against the timeout the server granted (it may
		// differ from Zookeeper.Timeout: the server bounds it to its
		// minSessionTimeout and maxSessionTimeout), and pauses on a timer
		// armed for the moment the fraction runs out, not at the next
		// probe. The leader may take up to half a tick to hear of a client
		// of a follower, at most a quarter of a timeout of at least two
		// ticks (the server's default minimum), and the fence probes every
		// tenth of the timeout; so with fraction f the pause lands at least
		// (0.65 - f) x timeout before the earliest expiry. This assumes the
		// process is not paused (GC, a descheduled VM) for longer than
		// that.
		//
		// Default 0.5. Must be > 0 and <= 0.6, which leaves at least 5% of
		// the timeout for scheduling.
		SelfFenceFraction float64
	}

	// Kafka says where the group reads the cluster's metadata: the brokers,
	// each subscribed topic's partitions and their leaders. It is not named
	// Metadata because the embedded sarama config has a field of that name.
	Kafka struct {
		// Brokers are bootstrap brokers ("host:port"). Empty (the default):
		// the metadata is read from ZooKeeper (/brokers/ids and
		// /brokers/topics, watched), as upstream does, which a cluster in
		// KRaft mode (every Kafka 4 cluster) no longer writes. Set: it is
		// read from Kafka, through metadata requests to these brokers and
		// the brokers they list, and ZooKeeper serves only the group's own
		// nodes (/consumers/<group>/...). Either way the assignment is the
		// same function of the members and the partitions (and leaders), so
		// instances of both kinds agree while a group moves over. Each
		// address must be "host:port".
		Brokers []string

		// RefreshInterval is how often the subscribed topics' metadata is
		// read from Kafka when Brokers is set: a topic that appears, added
		// partitions and moved leaders are seen within this interval (the
		// ZooKeeper source sees them at once through watches). Each refresh
		// is one metadata request; the group recomputes the assignment only
		// when the answer differs from the previous one. Default 10 s. Must
		// be >= 100 ms.
		RefreshInterval time.Duration
	}

	// Assignment configures how partitions are divided between instances.
	Assignment struct {
		// Strategy is StrategySticky (moves few partitions when members
		// join or leave; upstream's assignment until every member offers
		// it), StrategyRangeByLeader (upstream's assignment) or
		// StrategyRangeByID (ignores partition leaders, so leader movements
		// do not move partitions between instances). An instance with
		// StrategySticky agrees with upstream's instances and with ours
		// under StrategyRangeByLeader, as it falls back to that;
		// StrategyRangeByID needs every instance of the group on it.
		// Default StrategySticky.
		Strategy AssignmentStrategy
	}

	// Fetch configures how a partition's messages are read from Kafka.
	Fetch struct {
		// Batches: each partition worker fetches whole record batches from
		// the partition's leader itself and hands them out one message at
		// a time, fetching the next batch meanwhile (busy partitions are
		// fetched again at once; idle ones long-poll over connections of
		// the group's own, so they never hold up a busy one; busy ones over
		// others of its own). Batches fetched ahead share a budget of
		// Consumer.Fetch.MaxBytes. Close shuts those connections at once,
		// without waiting for a long poll in flight. false:
		// every partition is read through sarama's PartitionConsumer, one
		// message at a time, which costs one more goroutine hand-off per
		// message. sarama's PartitionConsumer is also used whatever this
		// says with Consumer.IsolationLevel ReadCommitted, a Version
		// before 0.11 or a RackID (sarama's consumer follows the leader's
		// preferred read replica), and for the rest of a partition's pass
		// after a fetch error that retrying does not mend (an offset out
		// of range, a batch larger than Consumer.Fetch.Max). Errors that
		// retrying mends (a moved leader, a broken connection) are retried
		// after Consumer.Retry.Backoff and a metadata refresh, at the
		// offset after the last message handed out; after 20 failed
		// retries in a row the partition falls back to sarama's
		// PartitionConsumer too. Every ordering, fence, drain and commit
		// rule is the same either way. Default true.
		Batches bool
	}

	// Messages configures the Messages() channel.
	Messages struct {
		// Buffer is how many messages may wait in the Messages() channel
		// for the application. 0 (the default): none, a message is handed
		// over only when the application takes it. More is faster for an
		// application that reads one message at a time, about twice as
		// fast at 256 (docs/performance.md). A clean rebalance or Close
		// still delivers nothing twice: a partition that stops waits, up
		// to Offsets.ProcessingTimeout, for the application to read and
		// mark what it has waiting there, as a handler's claim does, and
		// Close takes back what nobody has read for 200 ms. Whenever the
		// application must not read a partition's messages any more (its
		// claim may be lost, the fence paused delivery, its offset moved,
		// its drain timed out), they are taken back first, the other
		// partitions' staying in order; an application reading during a
		// take-back may get a few messages again. docs/recall.md, "A
		// shared buffer". Consume's handlers read buffers of their own, of
		// ChannelBufferSize. Must be >= 0 and <= 1,048,576.
		Buffer int
	}

	// Metrics configures the group's metrics (docs/metrics.md), which it
	// registers in the embedded config's MetricRegistry.
	Metrics struct {
		// LagInterval is how often the zkgroup-lag gauges (and State's
		// high-water marks) are refreshed from the partitions' leaders:
		// every interval the group asks each leader of an owned partition
		// for the high-water marks of all of them in one ListOffsets
		// request, and sets each owned partition's lag to its high-water
		// mark minus its committed offset. So a consumer that is stuck, and
		// commits nothing, shows a growing lag. Nothing is sent while no
		// partition is owned, and no metadata request is added (the
		// leaders are those the client has cached for the fetches). The
		// requests go over a connection of the group's own to each
		// leader, so Close cancels one in flight rather than wait for it.
		// Commits update the gauges too. 0 disables the refresh: the
		// gauges then move only at commits. Default 10 s. Must be 0 or
		// >= 100 ms.
		LagInterval time.Duration
	}

	// Static configures static membership, which Consumer.Group.InstanceId
	// turns on (sarama's field; Kafka's group.instance.id): the instance
	// registers under that id instead of "<host>:<uuid>", a second live
	// instance with the same id is refused (ErrFencedInstanceID), and when
	// it leaves (Close, a crash, an expired session) its partitions stay
	// reserved for it for GraceWindow, so a restart gets back exactly the
	// partitions it had and nothing moves twice. docs/static-members.md.
	Static struct {
		// GraceWindow is how long the partitions of a static member that
		// left wait for it, unowned, before they move to the others. Each
		// instance times it from when it saw the member leave: for a crash,
		// after its session expired (Zookeeper.Timeout). The member's own
		// setting is written with its reservation, so every instance
		// honours the same window. 0: no reservation, its partitions move
		// at once, as without an InstanceId. Ignored without
		// Consumer.Group.InstanceId. Default DefaultStaticGraceWindow
		// (30 s). Must be >= 0, in whole milliseconds.
		GraceWindow time.Duration
	}

	// Logger receives the group's log records. Default nil: nothing is
	// logged.
	Logger *slog.Logger
}

// NewConfig returns a Config with the documented defaults. Its two initial
// offsets, Offsets.Initial and the embedded Consumer.Offsets.Initial, are
// both sarama.OffsetOldest.
func NewConfig() *Config {
	c := &Config{
		Config:    sarama.NewConfig(),
		Zookeeper: kazoo.NewConfig(),
	}
	c.Offsets.Initial = DefaultInitialOffset
	c.Consumer.Offsets.Initial = DefaultInitialOffset // sarama's says newest: make them agree
	c.Offsets.ProcessingTimeout = DefaultProcessingTimeout
	c.Offsets.CommitInterval = DefaultCommitInterval
	c.Offsets.Storage = DefaultOffsetStorage
	c.Claim.InitialInterval = DefaultClaimInitialInterval
	c.Claim.MaxInterval = DefaultClaimMaxInterval
	c.Claim.RetryCooldown = DefaultClaimRetryCooldown
	c.Session.SelfFenceFraction = DefaultSelfFenceFraction
	c.Assignment.Strategy = DefaultAssignmentStrategy
	c.Kafka.RefreshInterval = DefaultKafkaRefreshInterval
	c.Fetch.Batches = true
	c.Metrics.LagInterval = DefaultLagInterval
	c.Static.GraceWindow = DefaultStaticGraceWindow
	return c
}

// Validate reports every invalid field, each as a *ConfigError naming the
// field's path (joined with errors.Join when there are several). It never
// changes the config. errors.Is(err, ErrInvalidConfig) holds for its result.
func (c *Config) Validate() error {
	if c == nil {
		return &ConfigError{Field: "*Config", Reason: "must not be nil"}
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}

	if c.Config == nil {
		bad("Config", "(the embedded *sarama.Config) must not be nil")
	} else {
		if err := validateSarama(c.Config); err != nil {
			errs = append(errs, &ConfigError{Field: "Config", Reason: "(the embedded *sarama.Config) is invalid", Err: err})
		}
		validateSaramaConsumer(c.Config, bad)
	}

	if c.Zookeeper == nil {
		bad("Zookeeper", "must not be nil")
	} else if err := c.Zookeeper.Validate(); err != nil {
		errs = append(errs, &ConfigError{Field: "Zookeeper", Reason: "is invalid", Err: err})
	}

	if c.Offsets.Initial != sarama.OffsetOldest && c.Offsets.Initial != sarama.OffsetNewest {
		bad("Offsets.Initial", "must be sarama.OffsetOldest (%d) or sarama.OffsetNewest (%d), got %d",
			sarama.OffsetOldest, sarama.OffsetNewest, c.Offsets.Initial)
	}
	ptOK := c.Offsets.ProcessingTimeout > 0
	if !ptOK {
		bad("Offsets.ProcessingTimeout", "must be > 0, got %s", c.Offsets.ProcessingTimeout)
	}
	if c.Offsets.CommitInterval < 0 {
		bad("Offsets.CommitInterval", "must be >= 0 (0 disables periodic commits), got %s", c.Offsets.CommitInterval)
	}
	if !c.Offsets.Storage.valid() {
		bad("Offsets.Storage", "must be %q, %q or %q, got %q",
			OffsetStorageZookeeper, OffsetStorageKafka, OffsetStorageDual, string(c.Offsets.Storage))
	} else if c.Offsets.ResetOffsets && c.Offsets.Storage.usesKafka() && c.Config != nil && !c.Version.IsAtLeast(sarama.V2_4_0_0) {
		// Otherwise every join fails at the reset, with sarama's "The
		// version of API is not supported".
		bad("Config.Version", "must be >= %s with Offsets.ResetOffsets and Offsets.Storage %q (deleting the group's offsets in Kafka takes OffsetDelete, Kafka 2.4), got %s",
			sarama.V2_4_0_0, string(c.Offsets.Storage), c.Version)
	}

	switch {
	case c.Claim.Budget < 0:
		bad("Claim.Budget", "must be >= 0 (0 means Offsets.ProcessingTimeout + %s), got %s", DefaultClaimMargin, c.Claim.Budget)
	case c.Claim.Budget > 0 && ptOK && c.Claim.Budget <= c.Offsets.ProcessingTimeout:
		bad("Claim.Budget", "must exceed Offsets.ProcessingTimeout (%s), got %s", c.Offsets.ProcessingTimeout, c.Claim.Budget)
	}
	ivOK := c.Claim.InitialInterval > 0
	if !ivOK {
		bad("Claim.InitialInterval", "must be > 0, got %s", c.Claim.InitialInterval)
	}
	switch {
	case c.Claim.MaxInterval <= 0:
		bad("Claim.MaxInterval", "must be > 0, got %s", c.Claim.MaxInterval)
	case ivOK && c.Claim.MaxInterval < c.Claim.InitialInterval:
		bad("Claim.MaxInterval", "must be >= Claim.InitialInterval (%s), got %s", c.Claim.InitialInterval, c.Claim.MaxInterval)
	}
	if c.Claim.RetryCooldown <= 0 {
		bad("Claim.RetryCooldown", "must be > 0, got %s", c.Claim.RetryCooldown)
	}

	if f := c.Session.SelfFenceFraction; math.IsNaN(f) || f <= 0 || f > maxSelfFenceFraction {
		bad("Session.SelfFenceFraction", "must be > 0 and <= %v (a larger one could pause delivery only after the session can expire), got %v", maxSelfFenceFraction, f)
	}

	if !c.Assignment.Strategy.Valid() {
		bad("Assignment.Strategy", "must be %q, %q or %q, got %q",
			StrategySticky, StrategyRangeByLeader, StrategyRangeByID, string(c.Assignment.Strategy))
	}

	for i, b := range c.Kafka.Brokers {
		if host, port, err := net.SplitHostPort(b); err != nil || host == "" || port == "" {
			bad(fmt.Sprintf("Kafka.Brokers[%d]", i), "must be \"host:port\", got %q", b)
		}
	}
	if c.Kafka.RefreshInterval < minKafkaRefreshInterval {
		bad("Kafka.RefreshInterval", "must be >= %s, got %s", minKafkaRefreshInterval, c.Kafka.RefreshInterval)
	}
	if b := c.Messages.Buffer; b < 0 || b > maxMessagesBuffer {
		bad("Messages.Buffer", "must be >= 0 (0: unbuffered) and <= %d, got %d", maxMessagesBuffer, b)
	}
	if li := c.Metrics.LagInterval; li != 0 && li < minLagInterval {
		bad("Metrics.LagInterval", "must be 0 (no refresh) or >= %s, got %s", minLagInterval, li)
	}
	switch gw := c.Static.GraceWindow; {
	case gw < 0:
		bad("Static.GraceWindow", "must be >= 0 (0: no reservation), got %s", gw)
	case gw%time.Millisecond != 0:
		bad("Static.GraceWindow", "must be in whole milliseconds (it is stored so), got %s", gw)
	}

	return errors.Join(errs...)
}

// claimBudget is the effective Claim.Budget: Offsets.ProcessingTimeout +
// DefaultClaimMargin when Claim.Budget is 0.
func (c *Config) claimBudget() time.Duration {
	if c.Claim.Budget == 0 {
		return c.Offsets.ProcessingTimeout + DefaultClaimMargin
	}
	return c.Claim.Budget
}

// logger returns Logger, or a logger that discards everything when it is nil.
func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
