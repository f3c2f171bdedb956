package fetch

import (
	"github.com/IBM/sarama"
)

// leaderEpochClient is the part of sarama.Client that names a partition's
// leader with its epoch; a Client without it fetches with epoch -1 (none).
type leaderEpochClient interface {
	LeaderAndEpoch(topic string, partition int32) (*sarama.Broker, int32, error)
}

// leaderAndEpoch returns the partition's leader and its leader epoch as
// client knows them now. The epoch goes in the fetch (CurrentLeaderEpoch,
// Fetch v9 and later): a broker whose epoch differs answers
// FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, and the feed refreshes the
// metadata and fetches again (see retriableFeedErrors).
func leaderAndEpoch(client Client, topic string, partition int32) (*sarama.Broker, int32, error) {
	if c, ok := client.(leaderEpochClient); ok {
		return c.LeaderAndEpoch(topic, partition)
	}
	b, err := client.Leader(topic, partition)
	return b, -1, err
}
