// Package consumergroup consumes Kafka topics as a group of instances that
// coordinate through ZooKeeper, with the /consumers/<group>/... layout of
// Kafka's original high-level consumer.
//
// It is a drop-in replacement for github.com/wvanbergen/kafka/consumergroup:
// the same JoinConsumerGroup, Messages, Errors, CommitUpto, FlushOffsets,
// Close and Config, the same ZooKeeper nodes, and by default the same
// partition assignment, so old and new instances can share a group during a
// rolling upgrade. Kafka traffic goes through github.com/IBM/sarama;
// ZooKeeper traffic goes through package kazoo.
//
// # ZooKeeper tree
//
//	/brokers/ids/<id>                          broker registration (read)
//	/brokers/topics/<t>                        partition map (read, watched)
//	/brokers/topics/<t>/partitions/<p>/state   leader and ISR (read, watched)
//	/consumers/<g>/ids/<instance>              EPHEMERAL: one per running instance
//	/consumers/<g>/owners/<t>/<p>              EPHEMERAL: the owning instance's ID
//	/consumers/<g>/offsets/<t>/<p>             PERSISTENT: decimal next offset to consume
//	/consumers/<g>/epochs/<t>/<p>              PERSISTENT: its version is the claim epoch
//
// Only the epochs subtree is new. Offsets stay plain ASCII decimals written
// with a real set, so tools such as Burrow keep reading them.
//
// # Kafka without ZooKeeper (KRaft)
//
// A cluster in KRaft mode (every Kafka 4 cluster, and a 3.x cluster after
// its migration) writes nothing under /brokers. With Config.Kafka.Brokers
// set, the group reads the brokers, each subscribed topic's partitions and
// their leaders from Kafka's metadata instead, and uses ZooKeeper only for
// its own /consumers/<g>/... nodes, which a standalone ZooKeeper can keep.
// Kafka has no watches, so the metadata is asked for every
// Kafka.RefreshInterval (default 10 s; one metadata request each, with
// automatic topic creation off), and the assignment is recomputed only when
// the answer changed: a topic that appears, added partitions and moved
// leaders are seen within that interval rather than at once. The
// assignment is the same function of the members and partitions (and
// leaders) for both sources, so instances reading ZooKeeper and instances
// reading Kafka agree while a group moves over (between their refreshes
// they may see different leaders; see Not guaranteed).
//
// # Lifecycle
//
//  1. JoinConsumerGroup validates its arguments and the Config, connects to
//     ZooKeeper, finds the brokers (in ZooKeeper, or from Kafka.Brokers), and
//     registers this instance under
//     /consumers/<g>/ids (Offsets.ResetOffsets first deletes stored offsets;
//     with kafka or dual storage only while no other member is registered,
//     since Kafka's offsets carry no epoch: ErrResetWhileMembersRun).
//     JoinConsumerGroupPattern does the same with a white_list registration:
//     a regular expression over topic names, covering topics created later.
//  2. Each instance computes the assignment from the registered instances,
//     their registrations and each topic's partitions: each topic is divided
//     (see Assign) between the instances whose registration subscribes to
//     it, so instances may consume different topics and no partition is left
//     to an instance that does not read its topic. With identical topic lists
//     this is upstream's assignment. Registrations are read as Kafka's
//     high-level consumer wrote them: static topic lists, or one white_list
//     or black_list regular expression matched against whole topic names
//     (Kafka's internal topics excluded; the stream counts are ignored). A
//     registration that cannot be read (not JSON, or an expression Go's
//     regexp package cannot compile) is reported once on Errors() with its
//     path, and its instance takes no partition, so the others share
//     everything between them. The instance
//     recomputes the assignment whenever an instance joins or leaves, a
//     registration changes, or a topic's partitions change (at once from
//     ZooKeeper's watches, within Kafka.RefreshInterval from Kafka's
//     metadata).
//  3. For each partition it gains, it claims the owner node and bumps the
//     partition's epoch in one transaction, waiting (on a watch, with a
//     jittered backoff as a fallback) while the previous owner drains, for up
//     to Claim.Budget; a claim that runs out is reported on Errors() and
//     retried after Claim.RetryCooldown while the partition stays assigned.
//  4. Once claimed, the partition consumes from the stored offset, or from
//     Offsets.Initial when none is stored or the stored one is out of range,
//     and delivers messages on Messages(). With Fetch.Batches (the default)
//     the partition's worker fetches whole record batches from the leader
//     itself, the next batch while it hands out the last, and hands them
//     out one message at a time: a partition with data is fetched again at
//     once, an idle one long-polls over a connection of the group's own so
//     it never holds up a busy one, and batches fetched ahead share a budget
//     of Consumer.Fetch.MaxBytes. sarama's PartitionConsumer reads instead
//     with read_committed, before Kafka 0.11, with a RackID, and after a
//     fetch error that retrying does not mend. Offsets.Initial is resolved to a
//     real offset first and stored (fenced by the claim) before anything is
//     delivered, retried until it is, so every claimed partition has an
//     offset node, even one never marked: monitors such as Burrow, which
//     read the nodes of partitions 0..n-1, see them all. A stored offset
//     past the log's end that Offsets.Initial takes back is written as a
//     reset (ZooKeeper storage): with an epoch bump that ends the claim,
//     and the partition is claimed again.
//  5. The application calls CommitUpto for each processed message; every
//     Offsets.CommitInterval, on FlushOffsets, and on release, the marked
//     offsets are committed, each fenced by the claim's epoch.
//  6. On a rebalance, partitions this instance keeps keep flowing. Each
//     partition it loses stops fetching, waits up to Offsets.ProcessingTimeout
//     for the delivered messages to be marked, commits, and releases its
//     claim (also fenced by the epoch). If the epoch moved after the final
//     commit (a reset), or the release did not get through, the owner node
//     is deleted while it still holds this instance's id under the claim's
//     session; so is one that a claim stopped while its reply was lost may
//     have created. Whatever still fails is swept by the group's loop.
//     No owner node outlives the worker that wanted it: a partition is
//     owned again within the session timeout plus a round trip after its
//     owner stops wanting it (plus the drain).
//  7. Close does step 6 for every partition, deregisters the instance, and
//     closes Messages() and Errors(). It returns within ProcessingTimeout
//     + 1.5 x the session timeout even if nobody reads either channel and
//     ZooKeeper is out of reach.
//
// Steps 3 to 6 are, for each partition, one state machine: claiming,
// consuming, draining, committing, releasing, done. Besides each state's
// own work, these events move it: stop (the partition moved away, or
// Close; taken while the instance is fenced off, it skips the drain and
// the commit), abandon (the session expired or the instance is fenced
// off: nothing may be committed), loss (the claim ended under us: the
// owner node deleted, the epoch moved), seek (the stored offset changed
// underneath: resume there), expiry (the session holding the claim is
// gone) and pause (fenced off: what a claim's buffer holds is taken
// back). Every state says what each event does; the table is in
// internal/worker, and docs/worker.md maps each event to where it is
// raised and handled. Three rules follow from it. A partition stops
// handing out messages the moment its claim may no longer be ours, and
// then neither waits for marks nor commits. A stop never skips the drain
// while the claim is held. A drain ends as soon as no mark could be
// committed any more, not at ProcessingTimeout.
//
// # Two ways to consume
//
// JoinConsumerGroup is upstream's API: every owned partition's messages
// arrive on one Messages() channel, marked with CommitUpto.
// NewConsumerGroup is sarama's: a HandlerGroup (a sarama.ConsumerGroup)
// whose Consume runs a sarama.ConsumerGroupHandler, with a channel and a
// ConsumeClaim goroutine per claimed partition, marked through the
// session's MarkMessage or MarkOffset. A handler written for
// sarama.NewConsumerGroup runs on it unchanged. Both sit on the same
// partition workers: claims, the session fence, drains, fenced commits and
// releases behave identically, and every guarantee below holds for both.
// Messages() is unbuffered; a claim's channel is buffered, as sarama's
// (Config.ChannelBufferSize, at most 64), and its worker takes back what the buffer
// holds whenever the handler must not read it: the claim possibly lost,
// the session gone, the instance fenced off, the position moved.
//
// Mapped onto sarama's session lifecycle, a Consume call is one session
// (one member registration): Setup once, before any claim delivers;
// ConsumeClaim once per claim; Cleanup once every ConsumeClaim has
// returned, before the last commits. Rebalances are cooperative, as under
// sarama's cooperative protocol: only the claims of partitions that move
// end (their channel closes), the others keep running, and Consume does
// not return. Claims() and GenerationID() change with each claim that
// starts or ends; the generation is this member's count, as the group has
// none. ResetOffset moves a partition's mark back (committed although
// lower, and undone by a later mark), without moving consumption, as
// sarama's does.
//
// # Offset storage and migration to Kafka
//
// Offsets.Storage chooses where offsets are committed and read: ZooKeeper
// (the default, as above), Kafka's committed offsets of the group ("kafka"),
// or both ("dual"). ZooKeeper coordinates the group whatever the storage:
// registrations, claims, epochs and the session fence work as described
// here. Kafka commits are standalone commits (generation -1, no member ID)
// sent to the group coordinator, so Kafka's tools (kafka-consumer-groups.sh
// --describe) show the group's offsets and lag, and a broker-coordinated
// consumer with the same group ID can take over from them.
//
// To move a running group, restart its instances one at a time with
// "dual", then, once all run dual, one at a time with "kafka". A dual
// instance commits to ZooKeeper first, fenced by the claim, then to Kafka,
// and starts a claimed partition at the higher of the two stored offsets
// (writing it to the store that was behind), as Kafka's own
// dual.commit.enabled migration did; so zookeeper and dual instances, then
// dual and kafka instances, can share the group during each roll without
// losing a message or delivering one twice. A zookeeper instance and a kafka
// instance must not share a group: each reads an offset the other does not
// write. A kafka instance reads its start offset from Kafka, falling back to
// Offsets.Initial.
//
// A Kafka commit is made only while the claim holds as far as the instance
// knows: the claim watch has not seen it end, the ZooKeeper session holding
// it is the current one, and the session fence is not paused; this is
// checked right before each OffsetCommit request is sent (once the
// coordinator is known), and no request is sent later than the shorter of
// Zookeeper.Timeout and Net.ReadTimeout after the commit began. Kafka cannot check the epoch
// itself, so unlike a ZooKeeper commit the check and the write are not one
// atomic step: a request already on its way when the claim moves can land
// after the new owner's commit. It holds only an offset this instance
// marked, so no message is skipped, but it may move the offset back
// (messages delivered again) until the owner's next commit round, which
// reads Kafka's offsets and writes again any that differ from its own. A
// reset with kafka or dual storage is refused while other members are
// registered, since a running member could read the old Kafka offset back
// after ZooKeeper's reset. Offsets unchanged for an hour are
// committed again, since Kafka expires the offsets of a group without
// broker-coordinated members offsets.retention.minutes after their last
// commit.
//
// # Guarantees
//
//   - At-least-once delivery: a message's offset is committed only after the
//     application marked it (or a later message of its partition).
//   - A committed offset never decreases, except by an explicit reset
//     (Offsets.ResetOffsets, a session's ResetOffset, or an operator
//     writing the offset node), or by Offsets.Initial taking back an offset
//     past the log's end, which is written as a reset. A reset through
//     kazoo bumps each partition's epoch with the deletion, so an owner's
//     commit in flight is refused rather than written over it. With Kafka
//     storage, see above for commits in flight.
//   - No partition stays unowned while its owner lives: no owner node
//     outlives the worker that wanted it (see step 6).
//   - Every commit has an exact outcome: one whose reply was lost (a dropped
//     connection, a leader election) is in doubt, and when the next commit
//     finds the offset node one version on holding exactly what was sent,
//     it was ours: no seek, no conflict reported.
//   - An owner learns within one round trip that its claim ended (its owner
//     node deleted, another claim, a reset), whether or not it has anything
//     to commit, and stops delivering that partition at once; a draining
//     partition stops waiting as soon as no mark could be committed.
//   - After a backward seek, a mark counts only for the message redelivered
//     at its offset, never for one delivered before the seek.
//   - At most one instance commits for a partition at a time: commits and
//     releases are fenced by the partition's epoch, so an instance that lost
//     its claim changes nothing.
//   - An instance cut off from ZooKeeper stops delivering before its session
//     can expire and another instance can claim its partitions: once the
//     ZooKeeper leader has not vouched for the session for
//     Session.SelfFenceFraction of the session timeout. The fence trusts only
//     answers the leader stands behind (a sync, which a follower cut off from
//     the leader cannot answer, where it would still answer reads), measures
//     against the timeout the server granted rather than the one asked for,
//     and pauses on a timer armed for the moment the fraction runs out. This
//     assumes the process is not paused (GC, a descheduled VM) for longer
//     than what is left of the session timeout by then (at least 0.05 of it
//     at the largest fraction allowed, 0.15 at the default). After an expiry
//     the instance drops every partition without committing, registers
//     again and rebalances.
//   - When the stored offset of an owned partition changes underneath (an
//     operator reset), the group drops its pending marks, resumes at the
//     stored offset and reports an *OffsetConflictError; it never overwrites
//     the new value.
//   - Messages() is unbuffered: a message is handed over only when the
//     application takes it, so a partition that moves strands no buffer of
//     messages for the next owner to deliver again. A claim's channel is
//     buffered; a claim that ends cleanly lets its handler read what the
//     buffer holds and waits for those marks, so neither strands anything.
//     A pause of delivery (the instance fenced off) takes the buffer back
//     at once, whatever the partition's worker is doing.
//   - Sends on Errors() never block a rebalance or Close; errors that find
//     the channel full are dropped and logged.
//   - A gained partition delivers its first message within milliseconds of
//     the claim: its first batch is read with a direct fetch, since sarama's
//     consumer waits 100 ms to batch new partitions before its first fetch.
//   - Whole batches change only where messages come from: every message
//     still passes the same checks (fence, claim, seek, the delivered and
//     marked offsets) on its way out, one at a time.
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
//     fires it may still hand out messages it had fetched, and the
//     application may still be processing messages delivered earlier. Its
//     commits will be refused.
//   - Ordering across partitions, or across a partition's move between
//     instances beyond Kafka's per-partition order.
//   - Agreement with upstream instances under StrategyRangeByID or when
//     instances consume different topics (upstream divides every topic
//     between all instances), or while instances of one group use different
//     strategies or see different partition leaders (which instances reading
//     Kafka's metadata may, for up to Kafka.RefreshInterval after a leader
//     moves): assignments may then overlap or leave gaps for a
//     while; claims stay exclusive, so overlaps wait and gaps are filled once
//     the views converge.
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
