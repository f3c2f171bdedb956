// Package topics tells a consumer group which partitions its subscribed
// topics have, and which broker leads each, and wakes the group when that
// changes.
//
// A Source reads them from one of two places, which give the same answer
// for the same cluster, so instances reading either agree on the
// assignment:
//
//   - ZooKeeperSource, upstream's way: the assignment at
//     /brokers/topics/<topic> and the leaders asked for (Leaders) at
//     /brokers/topics/<topic>/partitions/<id>/state, both watched, and
//     /brokers/topics itself while a topic is missing. A change is heard of
//     at once. A leader costs a read per partition, so the group asks for
//     every one only when its assignment orders partitions by leader.
//     Values are read again only once their watch fired, and the partition
//     lists also after Forget, which the group calls at its resync.
//   - KafkaSource, for clusters that no longer keep metadata in ZooKeeper:
//     Kafka's metadata, asked for every refresh interval. A change is heard
//     of within one interval.
//
// WithLeaderMoves wraps a Source to report the partitions whose leader
// moved between two answers, which the group's fetch engine follows at
// once (docs/batch-feed.md, "Leaders and epochs").
//
// Not guaranteed: that the answer is current. A ZooKeeper watch can be
// lost with its session, and a failed Kafka request keeps the last answer;
// the group's claims, not this package, keep two instances off one
// partition.
package topics
