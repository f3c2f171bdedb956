package consumergroup

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// Errors with upstream's names. They are sentinel values: compare them with
// errors.Is, since this package may wrap them.
var (
	// AlreadyClosing is returned by Close when the group is already closing or
	// closed. Same name and meaning as upstream.
	AlreadyClosing = errors.New("consumergroup: the consumer group is already shutting down")

	// UncleanClose is returned (wrapped) by Close when some partitions still
	// had uncommitted offsets at shutdown. Same name and meaning as upstream.
	UncleanClose = errors.New("consumergroup: not all offsets were committed before shutdown was completed")
)

// Idiomatic aliases of the upstream names: the same values, so errors.Is
// matches either spelling.
var (
	ErrAlreadyClosing = AlreadyClosing // alias of AlreadyClosing
	ErrUncleanClose   = UncleanClose   // alias of UncleanClose
)

// Errors about the arguments of JoinConsumerGroup. They are returned wrapped,
// with the offending value in the message.
var (
	// ErrInvalidGroupName: the group name is empty or cannot be a ZooKeeper
	// path component (it contains "/", is "." or "..", is not valid UTF-8,
	// or contains a character ZooKeeper rejects).
	ErrInvalidGroupName = errors.New("consumergroup: invalid consumer group name")

	// ErrNoTopics: the topic list is empty.
	ErrNoTopics = errors.New("consumergroup: no topics provided")

	// ErrInvalidTopic: a topic name is not a legal Kafka topic name (1 to
	// 249 characters of [a-zA-Z0-9._-], not "." or ".."), or is listed twice.
	ErrInvalidTopic = errors.New("consumergroup: invalid topic name")

	// ErrNoZookeeper: the ZooKeeper address list is empty or holds an empty
	// address.
	ErrNoZookeeper = errors.New("consumergroup: no zookeeper node address provided")
)

// ErrFencedInstanceID is wrapped by the error JoinConsumerGroup (and
// Consume) returns when Consumer.Group.InstanceId is registered by another
// live instance of the group (Kafka's FENCED_INSTANCE_ID): the join waits
// up to twice the ZooKeeper session timeout for that registration to go
// (the session of an instance that crashed expires by then) before it
// refuses.
// A running static instance whose id is taken while its own registration
// was gone (its session expired) reports it on Errors() and consumes
// nothing more until Close; Consume returns it. It is kazoo.ErrFencedInstanceID.
// docs/static-members.md.
var ErrFencedInstanceID = kazoo.ErrFencedInstanceID

// ErrInvalidConfig is wrapped by every error Config.Validate returns (through
// *ConfigError), so errors.Is(err, ErrInvalidConfig) tells a configuration
// problem from a runtime one.
var ErrInvalidConfig = errors.New("consumergroup: invalid config")

// ConfigError names one invalid Config field by its path ("Offsets.Initial",
// "Claim.Budget", "Zookeeper", "Config" for the embedded sarama config).
// It unwraps to ErrInvalidConfig and, when a nested Validate failed, to that
// error too (for example a sarama.ConfigurationError).
type ConfigError struct {
	Field  string // path of the field in Config
	Reason string // what is wrong, e.g. "must be > 0, got 0s"
	Err    error  // nested validation error, if any
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("consumergroup: ")
	b.WriteString(e.Field)
	if e.Reason != "" {
		b.WriteString(" ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrInvalidConfig and the nested error, if any.
func (e *ConfigError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidConfig}
	}
	return []error{ErrInvalidConfig, e.Err}
}

// PartitionError is the error type sent on the group's Errors() channel for a
// problem tied to one topic and partition (Partition is -1 for a problem with
// the whole topic, such as failing to list its partitions).
//
// It is an alias of sarama.ConsumerError, exactly what upstream sent on
// Errors(), so code that type-asserts *sarama.ConsumerError keeps working.
// Its Unwrap returns Err; use errors.As(err, &pe) with pe a *PartitionError
// (equivalently a *sarama.ConsumerError).
type PartitionError = sarama.ConsumerError

// newPartitionError returns a *PartitionError for topic/partition wrapping
// err, or nil if err is nil. An err that already is a *PartitionError for the
// same topic and partition is returned as it is.
func newPartitionError(topic string, partition int32, err error) error {
	if err == nil {
		return nil
	}
	var pe *PartitionError
	if errors.As(err, &pe) && pe.Topic == topic && pe.Partition == partition {
		return err
	}
	return &PartitionError{Topic: topic, Partition: partition, Err: err}
}

// OffsetConflictError reports, on Errors(), a commit refused because the
// partition's stored offset changed underneath while this instance still
// owned it (an operator reset it, say). The group resolved the conflict: it
// dropped its pending marks and resumed consuming at Stored. Err is the
// registry's error (it matches kazoo.ErrOffsetConflict with errors.Is).
type OffsetConflictError = offsets.ConflictError

// FetchFallbackError reports, on Errors() inside a *PartitionError, a
// partition handed from the batch feed (Fetch.Batches) to sarama's
// partition consumer: the feed ended with Err, which retrying does not
// mend, and the partition is read through sarama's partition consumer
// from Offset (the one after the last message handed out) until its fetch
// restarts (a seek, a pause that took messages back, the next claim).
// Nothing is skipped; the zkgroup-feed-fallbacks counter counts them. See
// docs/batch-feed.md.
type FetchFallbackError = fetch.FallbackError

// FetchRetriesExhaustedError is the Err of a *FetchFallbackError when the
// feed's fetch failed Retries times in a row at Offset with an error a
// retry normally mends (a moved leader, a broken connection), each after
// Consumer.Retry.Backoff and a metadata refresh. Err is the last failure.
type FetchRetriesExhaustedError = fetch.RetriesExhaustedError

// TruncationError reports, on Errors() inside a *PartitionError, a
// partition whose log now ends (LogEnd) below the position it was being
// read at (Position): an unclean leader election, or a follower behind
// the group promoted, dropped messages it had handed out. Reading resumes
// at LogEnd, where the new leader's messages follow; marks of the messages
// that are gone are not committed past it, and where LogEnd is below the
// committed offset it is stored as a reset (ZooKeeper offsets: the claim
// ends and is taken again). LogEnd is the log's end when the truncation
// was found: messages the new leader took before then, below it, are not
// read (sarama sends no OffsetForLeaderEpoch to find where the logs
// diverged). It unwraps to sarama.ErrOffsetOutOfRange. See
// docs/batch-feed.md, "Out of range mid-stream".
type TruncationError = fetch.TruncationError

// RetentionError reports, on Errors() inside a *PartitionError, a
// partition whose log now starts (LogStart) above the position it was
// being read at (Position): retention or DeleteRecords removed messages
// before they were read. Offsets Position to LogStart-1 are skipped;
// reading resumes at LogStart, committed before anything after it is
// handed out. It unwraps to sarama.ErrOffsetOutOfRange. See
// docs/batch-feed.md, "Out of range mid-stream".
type RetentionError = fetch.RetentionError

// maxTopicNameLength is Kafka's limit on topic names.
const maxTopicNameLength = 249

// validateJoinArgs checks the arguments of JoinConsumerGroup other than the
// config and returns every problem found (joined), each wrapping one of
// ErrInvalidGroupName, ErrNoTopics, ErrInvalidTopic or ErrNoZookeeper.
func validateJoinArgs(name string, topics []string, zookeeper []string) error {
	var errs []error
	if err := validateGroupName(name); err != nil {
		errs = append(errs, err)
	}

	if len(topics) == 0 {
		errs = append(errs, ErrNoTopics)
	}
	seen := make(map[string]bool, len(topics))
	for i, t := range topics {
		if err := validateTopicName(t); err != nil {
			errs = append(errs, fmt.Errorf("%w: topics[%d] %q %s", ErrInvalidTopic, i, t, err))
			continue
		}
		if seen[t] {
			errs = append(errs, fmt.Errorf("%w: topics[%d] %q is listed more than once", ErrInvalidTopic, i, t))
		}
		seen[t] = true
	}

	return errors.Join(append(errs, validateZookeeperArg(zookeeper)...)...)
}

// validateGroupArgs is validateJoinArgs without topics (NewConsumerGroup:
// they come with each Consume).
func validateGroupArgs(name string, zookeeper []string) error {
	return errors.Join(append([]error{validateGroupName(name)}, validateZookeeperArg(zookeeper)...)...)
}

// validateZookeeperArg checks the list of ZooKeeper addresses.
func validateZookeeperArg(zookeeper []string) []error {
	var errs []error
	if len(zookeeper) == 0 {
		errs = append(errs, ErrNoZookeeper)
	}
	for i, addr := range zookeeper {
		if strings.TrimSpace(addr) == "" {
			errs = append(errs, fmt.Errorf("%w: zookeeper[%d] is empty", ErrNoZookeeper, i))
		}
	}
	return errs
}

// validateGroupName accepts any name that is a single ZooKeeper path
// component: /consumers/<name> must be a legal znode path.
func validateGroupName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidGroupName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q is a relative path element", ErrInvalidGroupName, name)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%w: %q contains \"/\"", ErrInvalidGroupName, name)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidGroupName, name)
	}
	for _, r := range name {
		if zkForbiddenRune(r) {
			return fmt.Errorf("%w: %q contains the character %U, which ZooKeeper rejects", ErrInvalidGroupName, name, r)
		}
	}
	return nil
}

// zkForbiddenRune reports the characters ZooKeeper refuses in a path
// (PathUtils.validatePath): controls and the ranges below.
func zkForbiddenRune(r rune) bool {
	return r <= 0x1f ||
		(r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) ||
		(r >= 0xfff0 && r <= 0xffff)
}

// validateTopicName applies Kafka's rules for topic names and returns the
// reason a name is illegal, or nil.
func validateTopicName(t string) error {
	switch {
	case t == "":
		return errors.New("is empty")
	case t == "." || t == "..":
		return errors.New("is not allowed")
	case len(t) > maxTopicNameLength:
		return fmt.Errorf("is longer than %d characters", maxTopicNameLength)
	}
	for _, c := range t {
		legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !legal {
			return fmt.Errorf("contains %q; only [a-zA-Z0-9._-] are legal", c)
		}
	}
	return nil
}
