// Package consumergroup consumes Kafka topics as a group of instances that
// coordinate through ZooKeeper, with the /consumers/<group>/... layout of
// Kafka's original high-level consumer.
//
// It is a drop-in replacement for github.com/wvanbergen/kafka/consumergroup:
// the same JoinConsumerGroup, Messages, Errors, CommitUpto, FlushOffsets,
// Close and Config, the same ZooKeeper nodes, and upstream's partition
// assignment while any instance of the group is an upstream one, so old and
// new instances can share a group during a rolling upgrade; once every
// instance offers it, the default StrategySticky moves few partitions when
// an instance joins or leaves (docs/assignment.md). Kafka traffic goes through github.com/IBM/sarama;
// ZooKeeper traffic goes through package kazoo.
//
// # ZooKeeper tree
//
//	/brokers/ids/<id>                          broker registration (read)
//	/brokers/topics/<t>                        partition map (read, watched)
//	/brokers/topics/<t>/partitions/<p>/state   leader and ISR (read and watched when used)
//	/consumers/<g>/ids/<instance>              EPHEMERAL: one per running instance
//	/consumers/<g>/owners/<t>/<p>              EPHEMERAL: the owning instance's ID
//	/consumers/<g>/offsets/<t>/<p>             PERSISTENT: decimal next offset to consume
//	/consumers/<g>/epochs/<t>/<p>              PERSISTENT: its version is the claim epoch
//	/consumers/<g>/static/<instance>           PERSISTENT: a static member's reservation
//
// Only the epochs and static subtrees are new (the static one exists only
// for static members: Consumer.Group.InstanceId, docs/static-members.md),
// and an "assignment" list in the registrations, which upstream ignores.
// Every instance computes the assignment on
// its own, from the same inputs; it claims a partition it gains by creating
// its owner node and bumping its epoch in one transaction, and fences its
// commits and releases with that epoch. Offsets stay plain ASCII decimals
// written with a real set, so tools such as Burrow keep reading them. The
// docs/ pages named here are in the repository: docs/lifecycle.md has the
// steps from JoinConsumerGroup to Close.
//
// # Kafka without ZooKeeper (KRaft)
//
// A cluster in KRaft mode (every Kafka 4 cluster, and a 3.x cluster after
// its migration) writes nothing under /brokers. With Config.Kafka.Brokers
// set, the group reads brokers, partitions and leaders from Kafka's metadata
// every Kafka.RefreshInterval (default 10 s), seeing changes within that
// interval rather than at once, and keeps in ZooKeeper only its own
// /consumers/<g>/... nodes, which a standalone ZooKeeper can hold.
//
// # Two ways to consume
//
// JoinConsumerGroup is upstream's API: every owned partition's messages
// arrive on one Messages() channel (unbuffered, or buffered with
// Config.Messages.Buffer), marked with CommitUpto;
// JoinConsumerGroupPattern subscribes to a regular expression over topic
// names instead. NewConsumerGroup is sarama's: a HandlerGroup (a
// sarama.ConsumerGroup) whose Consume runs a sarama.ConsumerGroupHandler,
// with a channel (buffered as sarama's: Config.ChannelBufferSize, at most
// 64) and a ConsumeClaim goroutine per claimed partition, marked through
// the session's MarkMessage or MarkOffset; a handler written for
// sarama.NewConsumerGroup runs on it unchanged. A Consume call is one
// session, and rebalances are cooperative: only the claims of partitions
// that move end. Both sit on the same partition workers, and every
// guarantee below holds for both.
//
// # Offset storage and migration to Kafka
//
// Offsets.Storage chooses where offsets are committed and read: ZooKeeper
// (the default, as above), Kafka's committed offsets of the group
// ("kafka"), which Kafka's tools show and a broker-coordinated consumer can
// take over, or both ("dual"). ZooKeeper coordinates the group whatever the
// storage: registrations, claims, epochs and the session fence.
//
// To move a running group, restart its instances one at a time with
// "dual", then, once all run dual, with "kafka"; never let a zookeeper and
// a kafka instance share a group (each reads an offset the other does not
// write). Kafka cannot check a claim's epoch, so a Kafka commit is checked
// against the claim just before it is sent, not atomically, and a reset
// with kafka or dual storage is refused while other members are registered
// (ErrResetWhileMembersRun): see docs/kafka-offsets.md.
//
// # Monitoring
//
// The group registers its metrics (claims, commits, each owned partition's
// lag, the session's state, dropped errors) in the embedded config's
// MetricRegistry, each named with its group, whose labels LabelsOf returns.
// The lag gauges follow the leaders' high-water marks every
// Metrics.LagInterval, so a stuck consumer shows. State returns a member's
// session and owned partitions for health checks. See docs/metrics.md.
//
// # Guarantees
//
//   - At-least-once delivery: a message's offset is committed only after the
//     application marked it (or a later message of its partition).
//   - At most one instance commits for a partition at a time: commits and
//     releases are fenced by the partition's epoch, so an instance that lost
//     its claim changes nothing.
//   - A committed offset never decreases, except by an explicit reset
//     (Offsets.ResetOffsets, a session's ResetOffset, or an operator
//     writing the offset node) or by Offsets.Initial taking back an offset
//     past the log's end. With Kafka storage, a commit in flight when the
//     claim moves may move it back until the owner's next commit round.
//   - When the stored offset of an owned partition changes underneath (an
//     operator reset), the group drops its pending marks, resumes at the
//     stored offset and reports an *OffsetConflictError, never overwriting
//     the new value; after such a backward seek a mark counts only for the
//     message redelivered at its offset, never for one delivered before.
//   - Every commit has an exact outcome, also one whose reply was lost
//     (docs/in-doubt-commits.md).
//   - An owner learns within one round trip that its claim ended (its owner
//     node deleted, another claim, a reset) and stops delivering that
//     partition at once (docs/worker.md).
//   - No partition stays unowned while its owner lives: no owner node
//     outlives the worker that wanted it (docs/owner-release.md).
//   - An instance cut off from ZooKeeper stops delivering before its session
//     can expire and another instance can claim its partitions: once the
//     leader has not vouched for it for Session.SelfFenceFraction of the
//     session timeout (docs/fence.md). After an expiry it drops every
//     partition without committing, registers again and rebalances.
//   - Messages() strands no buffer of messages for the next owner to
//     deliver again, and a claim's buffer, or a buffered Messages()'s, is
//     taken back whenever the application must not read it: a buffered
//     Messages() is shared by every partition, so a take-back holds every
//     sender off, and puts back the other partitions' messages only when
//     the application got nothing after them (docs/recall.md).
//   - Sends on Errors() never block a rebalance or Close; errors that find
//     the channel full are dropped and logged. Close returns within
//     Offsets.ProcessingTimeout + 1.5 x the session timeout; CloseContext
//     also within about a quarter of the session timeout after its context
//     ends, cutting the drain short, committing what was marked and
//     closing the session (docs/shutdown.md).
//   - A gained partition delivers its first message within milliseconds of
//     the claim, and whole batches (Fetch.Batches) change only where
//     messages come from (docs/batch-feed.md).
//   - Invalid configuration and arguments are rejected with errors naming the
//     field; invalid values are never silently replaced.
//
// # Not guaranteed
//
//   - Exactly-once processing. Messages delivered but not marked within
//     Offsets.ProcessingTimeout of a partition's release are delivered again
//     to the next owner, as are messages marked but not yet committed when an
//     instance crashes or loses its session.
//   - That a cut-off instance delivers nothing: until its self-fence timer
//     fires (later if the process is paused: GC, a descheduled VM) it may
//     still hand out messages it had fetched, and the application may still
//     be processing messages delivered earlier. Its ZooKeeper commits are
//     refused; a Kafka commit already on its way may still land (see
//     docs/kafka-offsets.md).
//   - That a cut-off instance's own writes elsewhere (a database) stop: it
//     may still be processing messages when its successor starts. Stamp
//     them with the fencing token of the claim they came under (ClaimEpoch
//     in ConsumeClaim, MessageEpoch for Messages()), which every later
//     claim exceeds, and have the sink refuse a write whose epoch is lower
//     than the one it stored for the partition, in the write's own
//     transaction (UPDATE ... SET epoch = ?, offset = ? WHERE partition = ?
//     AND epoch <= ?): docs/fencing-tokens.md, examples/fencedsink.
//   - Ordering across partitions, or across a partition's move between
//     instances beyond Kafka's per-partition order.
//   - Agreement on the assignment with upstream instances under
//     StrategyRangeByID or different topic lists, or among instances using
//     different strategies (StrategySticky and StrategyRangeByLeader
//     agree: sticky is used only once every instance offers it) or seeing
//     different leaders (with Kafka's
//     metadata, for up to Kafka.RefreshInterval): assignments may overlap or
//     leave gaps for a while; claims stay exclusive, so overlaps wait and
//     gaps are filled once the views converge (docs/coordination.md).
//   - Progress while ZooKeeper is unreachable: no partition is claimed,
//     committed or released until it is back.
//
// # Keeping the model true
//
// The claim, commit, release and reset protocol, with lost replies, session
// expiry, resets and the fence's budget, is modelled in Promela under model/
// in the repository and checked by SPIN in CI. A change to the offset
// manager, the partition worker's claim and release decisions or the
// session fence that changes the protocol changes the model in the same
// commit.
package consumergroup
