package fetch

import (
	"time"

	"github.com/IBM/sarama"
)

// Moved leaders: a broker that lost a partition's leadership may keep
// answering its long polls empty, and only errors refresh the client's
// metadata (otherwise sarama refreshes every Metadata.RefreshFrequency,
// 10 minutes by default). So long polls that come back empty have the
// client refresh their topics' metadata, at most once per
// leaderCheckInterval; the partition's next fetch then goes to the leader
// the refreshed metadata names, with its epoch. See docs/batch-feed.md,
// "Leaders and epochs".

// leaderCheckInterval is how often, at most, empty long polls refresh the
// metadata of their topics: a moved leader is fetched from within about
// this long plus one long poll.
const leaderCheckInterval = time.Second

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

// checkLeaders has the client refresh the metadata of topics, whose long
// polls came back empty, unless it did less than leaderCheckInterval ago
// or a refresh still runs. The refresh runs beside the rounds: a slow
// metadata request holds up no fetch. f.mu is not held.
func (f *roundFetcher) checkLeaders(topics []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refreshing || time.Since(f.refreshedAt) < leaderCheckInterval || f.ownConns && f.closed {
		return
	}
	f.refreshing, f.refreshedAt = true, time.Now()
	f.rounds.Add(1) // closeConns waits for it
	go func() {
		defer f.rounds.Done()
		_ = f.env.client.RefreshMetadata(dedupe(topics)...)
		f.mu.Lock()
		f.refreshing = false
		f.mu.Unlock()
	}()
}

// dedupe returns names without repeats, in first-seen order.
func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
