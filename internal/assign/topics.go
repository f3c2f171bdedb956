package assign

import "slices"

// Member is one registered instance, its subscription and the
// strategies its registration offers (see OfferedBy and InEffect).
type Member struct {
	ID     string
	Sub    Subscription
	Offers []Strategy
}

// TopicMembers returns, for each of topics, the IDs of the members that
// subscribe to it, sorted. A topic nobody subscribes to has no entry. The
// result does not depend on the order of members.
func TopicMembers(members []Member, topics []string) map[string][]string {
	out := make(map[string][]string, len(topics))
	for _, topic := range topics {
		var ids []string
		for _, m := range members {
			if m.Sub.Includes(topic) {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			out[topic] = slices.Compact(ids)
		}
	}
	return out
}

// Topics divides each topic's partitions between the members that
// subscribe to it (see Assign and Rendezvous) and returns, for each instance,
// its partitions of each topic. When every member subscribes to every topic
// it is Assign with all members, topic by topic. Topics absent from
// partitions (not existing yet) are left out, as are instances that get
// nothing. Sticky is used only when every member offers it (InEffect).
func Topics(strategy Strategy, members []Member, partitions map[string][]Partition) (map[string]map[string][]Partition, error) {
	strategy = InEffect(strategy, members)
	topics := make([]string, 0, len(partitions))
	for topic := range partitions {
		topics = append(topics, topic)
	}
	byTopic := TopicMembers(members, topics)
	out := make(map[string]map[string][]Partition)
	for _, topic := range topics {
		assigned, err := AssignTopic(strategy, topic, byTopic[topic], partitions[topic])
		if err != nil {
			return nil, err
		}
		for id, parts := range assigned {
			if out[id] == nil {
				out[id] = make(map[string][]Partition)
			}
			out[id][topic] = parts
		}
	}
	return out, nil
}

// AssignTopic is Assign for one named topic: for Sticky it returns
// Rendezvous(topic, instanceIDs, partitions), as every instance computes it
// once all offer it; for the range strategies, Assign.
func AssignTopic(strategy Strategy, topic string, instanceIDs []string, partitions []Partition) (map[string][]Partition, error) {
	if strategy == Sticky {
		return Rendezvous(topic, instanceIDs, partitions), nil
	}
	return Assign(strategy, instanceIDs, partitions)
}
