package fetch

import (
	"time"

	"github.com/IBM/sarama"
)

// Moved leaders: a broker that lost a partition's leadership may keep
// answering its long polls empty, and only errors refresh the client's
// metadata (otherwise sarama refreshes every Metadata.RefreshFrequency,
// 10 minutes by default). So long polls that come back empty ask their
// broker for the partitions' leaders, at most once per
// leaderCheckInterval, when their broker's own metadata says the leader
// moved; the partition's next fetch then goes to the leader the refreshed
// metadata names, with its epoch. See docs/batch-feed.md,
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

// checkLeaders asks broker id, over conn (the connection a round to it
// went over), for the leaders of wants, whose long polls came back empty,
// unless it was asked less than leaderCheckInterval ago or still is; a
// partition it names another leader or a newer epoch for has the client
// refresh its topic's metadata. The question goes over the fetcher's own
// connection, not the client's: a refresh there queues behind whatever
// the client's connection holds (a slow offset read), and can hold up
// the client's Close. It runs beside the rounds, and nothing waits for it:
// it ends when conn is closed. f.mu is not held.
func (f *roundFetcher) checkLeaders(id int32, conn *sarama.Broker, wants []*fetchWant) {
	if conn == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.checking[id] || time.Since(f.checkedAt[id]) < leaderCheckInterval || f.ownConns && f.closed {
		return
	}
	f.checking[id], f.checkedAt[id] = true, time.Now()
	go func() {
		defer func() {
			f.mu.Lock()
			f.checking[id] = false
			f.mu.Unlock()
		}()
		if moved := f.movedTopics(id, conn, wants); len(moved) > 0 {
			_ = f.env.client.RefreshMetadata(moved...)
		}
	}()
}

// movedTopics returns the topics of wants for which broker id, asked over
// conn, names another leader than id, or a newer leader epoch than the
// want was fetched with. An unanswered question names none: a broken
// connection is the rounds' to find.
func (f *roundFetcher) movedTopics(id int32, conn *sarama.Broker, wants []*fetchWant) []string {
	var topics []string
	for _, w := range wants {
		topics = append(topics, w.topic)
	}
	topics = dedupe(topics)
	resp, err := conn.GetMetadata(sarama.NewMetadataRequest(f.env.config.Version, topics))
	if err != nil {
		return nil
	}
	type leader struct{ id, epoch int32 }
	leaders := make(map[topicPartition]leader)
	for _, tm := range resp.Topics {
		for _, pm := range tm.Partitions {
			leaders[topicPartition{tm.Name, pm.ID}] = leader{pm.Leader, pm.LeaderEpoch}
		}
	}
	var moved []string
	for _, w := range wants {
		l, ok := leaders[topicPartition{w.topic, w.partition}]
		if ok && (l.id != id || w.epoch >= 0 && l.epoch > w.epoch) {
			moved = append(moved, w.topic)
		}
	}
	return dedupe(moved)
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
