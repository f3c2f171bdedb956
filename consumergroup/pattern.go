package consumergroup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zkgroup/kafka/internal/assign"
)

// ErrInvalidPattern: the topic pattern given to JoinConsumerGroupPattern is
// empty or is not a regular expression Go can compile. Returned wrapped,
// with the pattern and the reason.
var ErrInvalidPattern = assign.ErrInvalidPattern

// JoinConsumerGroupPattern is JoinConsumerGroup with a whitelist instead of
// a topic list: the instance consumes every topic whose whole name matches
// the regular expression pattern, including topics created after it joined
// (the topic list in ZooKeeper is watched; a new matching topic is taken up
// as soon as its creation is seen). Kafka's internal topics
// (__consumer_offsets, __transaction_state) are never included.
//
// The instance registers as Kafka's high-level consumer registered a
// whitelist (Consumer.createMessageStreamsByFilter with a Whitelist):
// pattern "white_list" and the expression as the subscription's only key,
// {"<expression>": 1}. The expression is normalized as Kafka normalizes it:
// trimmed, commas read as alternation ("a,b" is "a|b"), spaces and
// surrounding quotes removed. It is matched with Go's regexp syntax (RE2),
// which shares Java's common subset; lookarounds and backreferences are
// refused with ErrInvalidPattern.
//
// Instances joined with a pattern and instances joined with a topic list
// can share a group: each topic's partitions are divided between the
// instances whose subscription covers it, and Kafka's own consumers in the
// group read the same registrations. The other arguments, the errors and
// the lifecycle are JoinConsumerGroup's.
func JoinConsumerGroupPattern(name, pattern string, zookeeper []string, config *Config) (*ConsumerGroup, error) {
	var errs []error
	if err := validateGroupName(name); err != nil {
		errs = append(errs, err)
	}
	filter, err := assign.NewWhiteList(pattern)
	if err != nil {
		errs = append(errs, err)
	}
	if len(zookeeper) == 0 {
		errs = append(errs, ErrNoZookeeper)
	}
	for i, addr := range zookeeper {
		if strings.TrimSpace(addr) == "" {
			errs = append(errs, fmt.Errorf("%w: zookeeper[%d] is empty", ErrNoZookeeper, i))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return startGroup(name, nil, filter, zookeeper, config, joinOptions{runFence: true})
}
