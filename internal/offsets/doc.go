// Package offsets owns the group's offsets: what each owned partition has
// delivered and marked, when it is committed, and where it is stored.
//
//   - Committer: tracks the owned partitions (Partition), commits what
//     their owners marked every commit interval, on Flush and as a
//     partition leaves, each partition's commits one at a time.
//   - Store: where offsets live, with three implementations: ZooKeeper
//     (each commit fenced by the claim's epoch), Kafka's group offsets, and
//     dual (ZooKeeper, then Kafka; a claim starts at the higher of the two).
//     The committer never asks which one it has.
//   - KafkaOffsets: the client of Kafka's group offsets, with a connection
//     of its own to the coordinator for commits (docs/kafka-offsets.md).
//   - Tracker, InDoubt, Redelivery: one partition's positions, its commits
//     whose reply was lost (docs/in-doubt-commits.md), and the marks a
//     backward seek makes suspect.
//   - claimDeliveries: which claim of a partition handed a message out, for
//     the fencing token of the message (docs/fencing-tokens.md).
//
// The rules it keeps:
//
//   - A commit never moves an offset backwards, except a rewind, which is
//     stored as a reset is and ends the claim.
//   - A commit is made only while the claim holds: a moved epoch marks the
//     partition lost and tells its Owner; nothing is committed for it again.
//   - An offset changed underneath is adopted, never overwritten: pending
//     marks are dropped and the Owner seeks there.
//   - A write whose reply was lost is in doubt, not failed; found later, it
//     is recognised as ours, with no seek and no report.
//   - No wait for Kafka outlasts Close (Deps.Closing), and no commit to
//     Kafka is sent once its claim is seen lost or the instance is fenced
//     off.
//
// Offsets are "next" offsets, as ZooKeeper stores them: the offset of the
// next message to consume; a negative one means none is stored.
//
// Not here: claiming partitions, the session fence, fetching; the committer
// is given what it needs of them (Deps, Owner).
package offsets
