package consumergroup

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zkgroup/kafka/kazoo"
)

// subscription is the set of topics one registered instance consumes, read
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
type subscription struct {
	topics map[string]bool // static
	filter *regexp.Regexp  // wildcard; anchored to the whole name
	deny   bool            // black_list: filter names the topics left out
}

// internalTopics are the topics Kafka's high-level consumer leaves out of a
// white_list or black_list subscription.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// errBadSubscription marks a registration that is valid JSON but whose
// subscription cannot be read.
var errBadSubscription = errors.New("subscription cannot be read")

// includes reports whether the subscription covers topic.
func (s subscription) includes(topic string) bool {
	if s.filter == nil {
		return s.topics[topic]
	}
	if internalTopics[topic] {
		return false
	}
	return s.filter.MatchString(topic) != s.deny
}

// parseSubscription reads reg's subscription. An error (wrapping
// errBadSubscription) means it cannot be read: more than one expression in
// a white_list or black_list registration, or an expression Go cannot
// compile (Kafka's are Java regular expressions; the common subset is the
// same).
func parseSubscription(reg *kazoo.Registration) (subscription, error) {
	if reg.Pattern != kazoo.RegPatternWhiteList && reg.Pattern != kazoo.RegPatternBlackList || len(reg.Subscription) == 0 {
		topics := make(map[string]bool, len(reg.Subscription))
		for topic := range reg.Subscription {
			topics[topic] = true
		}
		return subscription{topics: topics}, nil
	}
	if len(reg.Subscription) > 1 {
		keys := make([]string, 0, len(reg.Subscription))
		for k := range reg.Subscription {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return subscription{}, fmt.Errorf("%w: pattern %q with %d expressions %q, want one", errBadSubscription, reg.Pattern, len(keys), keys)
	}
	var raw string
	for k := range reg.Subscription {
		raw = k
	}
	re, err := regexp.Compile("^(?:" + kafkaTopicRegex(raw) + ")$")
	if err != nil {
		return subscription{}, fmt.Errorf("%w: pattern %q: %v", errBadSubscription, reg.Pattern, err)
	}
	return subscription{filter: re, deny: reg.Pattern == kazoo.RegPatternBlackList}, nil
}

// kafkaTopicRegex normalizes a topic filter as Kafka's TopicFilter does:
// trimmed, commas read as alternation, spaces removed, and surrounding
// quotes (left by property files) stripped.
func kafkaTopicRegex(raw string) string {
	s := strings.TrimSpace(raw)
	s = strings.ReplaceAll(s, ",", "|")
	s = strings.ReplaceAll(s, " ", "")
	s = strings.TrimLeft(s, `"'`)
	return strings.TrimRight(s, `"'`)
}

// member is one registered instance and its subscription.
type member struct {
	id  string
	sub subscription
}

// topicMembers returns, for each of topics, the IDs of the members that
// subscribe to it, sorted. A topic nobody subscribes to has no entry. The
// result does not depend on the order of members.
func topicMembers(members []member, topics []string) map[string][]string {
	out := make(map[string][]string, len(topics))
	for _, topic := range topics {
		var ids []string
		for _, m := range members {
			if m.sub.includes(topic) {
				ids = append(ids, m.id)
			}
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			out[topic] = slices.Compact(ids)
		}
	}
	return out
}

// assignTopics divides each topic's partitions between the members that
// subscribe to it (see Assign) and returns, for each instance, its
// partitions of each topic. When every member subscribes to every topic it
// is Assign with all members, topic by topic. Topics absent from partitions
// (not existing yet) are left out, as are instances that get nothing.
func assignTopics(strategy AssignmentStrategy, members []member, partitions map[string][]PartitionInfo) (map[string]map[string][]PartitionInfo, error) {
	topics := make([]string, 0, len(partitions))
	for topic := range partitions {
		topics = append(topics, topic)
	}
	byTopic := topicMembers(members, topics)
	out := make(map[string]map[string][]PartitionInfo)
	for _, topic := range topics {
		assigned, err := Assign(strategy, byTopic[topic], partitions[topic])
		if err != nil {
			return nil, err
		}
		for id, parts := range assigned {
			if out[id] == nil {
				out[id] = make(map[string][]PartitionInfo)
			}
			out[id][topic] = parts
		}
	}
	return out, nil
}
