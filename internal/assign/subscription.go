package assign

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zkgroup/kafka/kazoo"
)

// Subscription is the set of topics one registered instance consumes, read
// from its registration as Kafka's high-level consumer reads it. The zero
// value subscribes to nothing.
//
// A static registration (any pattern other than white_list or black_list,
// as in Kafka) subscribes to the topics its subscription map names. A
// white_list or black_list registration holds one regular expression as the
// map's only key; it subscribes to the topics whose whole name matches it
// (white_list) or does not match it (black_list), never to Kafka's internal
// topics. The stream counts (the map's values) are not used: partitions are
// divided between instances, not streams.
type Subscription struct {
	topics map[string]bool // static
	filter *regexp.Regexp  // wildcard; anchored to the whole name
	deny   bool            // black_list: filter names the topics left out
}

// internalTopics are the topics Kafka's high-level consumer leaves out of a
// white_list or black_list subscription.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// ErrBadSubscription marks a registration that is valid JSON but whose
// subscription cannot be read.
var ErrBadSubscription = errors.New("subscription cannot be read")

// Static returns the static subscription to topics.
func Static(topics ...string) Subscription {
	m := make(map[string]bool, len(topics))
	for _, t := range topics {
		m[t] = true
	}
	return Subscription{topics: m}
}

// Includes reports whether the subscription covers topic.
func (s Subscription) Includes(topic string) bool {
	if s.filter == nil {
		return s.topics[topic]
	}
	if internalTopics[topic] {
		return false
	}
	return s.filter.MatchString(topic) != s.deny
}

// ParseSubscription reads reg's subscription. An error (wrapping
// ErrBadSubscription) means it cannot be read: more than one expression in
// a white_list or black_list registration, or an expression Go cannot
// compile (Kafka's are Java regular expressions; the common subset is the
// same).
func ParseSubscription(reg *kazoo.Registration) (Subscription, error) {
	if reg.Pattern != kazoo.RegPatternWhiteList && reg.Pattern != kazoo.RegPatternBlackList || len(reg.Subscription) == 0 {
		topics := make(map[string]bool, len(reg.Subscription))
		for topic := range reg.Subscription {
			topics[topic] = true
		}
		return Subscription{topics: topics}, nil
	}
	if len(reg.Subscription) > 1 {
		keys := make([]string, 0, len(reg.Subscription))
		for k := range reg.Subscription {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return Subscription{}, fmt.Errorf("%w: pattern %q with %d expressions %q, want one", ErrBadSubscription, reg.Pattern, len(keys), keys)
	}
	var raw string
	for k := range reg.Subscription {
		raw = k
	}
	re, err := regexp.Compile("^(?:" + TopicRegex(raw) + ")$")
	if err != nil {
		return Subscription{}, fmt.Errorf("%w: pattern %q: %v", ErrBadSubscription, reg.Pattern, err)
	}
	return Subscription{filter: re, deny: reg.Pattern == kazoo.RegPatternBlackList}, nil
}

// TopicRegex normalizes a topic filter as Kafka's TopicFilter does:
// trimmed, commas read as alternation, spaces removed, and surrounding
// quotes (left by property files) stripped.
func TopicRegex(raw string) string {
	s := strings.TrimSpace(raw)
	s = strings.ReplaceAll(s, ",", "|")
	s = strings.ReplaceAll(s, " ", "")
	s = strings.TrimLeft(s, `"'`)
	return strings.TrimRight(s, `"'`)
}
