// Package kazoo reads and writes the Kafka metadata and the consumer-group
// state that live in ZooKeeper, with the API of
// github.com/wvanbergen/kazoo-go: code written for kazoo-go compiles and
// behaves the same after changing its import paths (kazoo-go's zk package
// becomes github.com/go-zookeeper/zk). It adds the session tracking and the
// fenced claim, commit and release primitives that make a consumer group
// safe, and is the only package of this module that talks to ZooKeeper.
//
// # The tree
//
// Below Config.Chroot:
//
//	/controller                                the controller broker (read)
//	/brokers/ids/<id>                          broker registrations (read)
//	/brokers/topics/<t>                        partition assignment (read, watched)
//	/brokers/topics/<t>/partitions/<p>/state   leader and ISR (read)
//	/config/topics/<t>                         topic configuration
//	/admin/delete_topics/<t>                   deletion marks
//	/consumers/<g>/ids/<instance>              EPHEMERAL registration (kazoo-go's JSON)
//	/consumers/<g>/owners/<t>/<p>              EPHEMERAL, data = the owning instance's id
//	/consumers/<g>/offsets/<t>/<p>             PERSISTENT, ASCII decimal of the next offset
//	/consumers/<g>/epochs/<t>/<p>              PERSISTENT, its version is the claim epoch
//
// Only the epochs folder is new; everything else is the layout of Kafka's
// original high-level consumer, so tools such as Burrow read it as before.
//
// # Errors and watches
//
// Where kazoo-go returned one of its own errors (ErrInstanceNotRegistered,
// ErrPartitionClaimedByOther, ErrTopicExists, ...), the same method returns
// that value bare, so callers may compare with ==; the details (which
// znode, which session holds it) go to Config.Logger. Errors from ZooKeeper
// come wrapped in a *ZnodeError that names the znode: compare them with
// errors.Is (ErrNoNode is zk.ErrNoNode). Methods kazoo-go did not have
// (Claim, Release, CommitOffsetFenced, ...) wrap every error with its
// details.
//
// Every Watch method returns a channel of zk.Event (Event is the same type)
// that receives one event and is then closed. EventNotWatching means the
// watch was lost with the connection: read again.
//
// # The protocol
//
// A registration or an owner node belongs to the ZooKeeper session that
// created it (Stat.EphemeralOwner), not to whoever holds the same instance
// id.
//
//   - Claim: one Multi creates the ephemeral owner node, sets it once (our
//     owner nodes are at version 1, upstream members' at 0) and sets the
//     epoch node; the epoch node's new version is the claim's epoch. A claim is
//     ours only if ZooKeeper says so: an existing owner node is ours when
//     it holds our id and its EphemeralOwner is our current session (a claim
//     whose reply was lost); our id under an older session is a stale node,
//     removed with its exact version and fenced by the epoch.
//   - Commit (CommitOffsetFenced): Multi(Check(epoch, E), SetData(offset,
//     expected version)). Release: Multi(Check(epoch, E), Delete(owner,
//     exact version)), at the version the claim made without reading the
//     node (fenced by the instance's registration too), then, refused or
//     lost, at the version read (see
//     docs/coordination.md#releases-without-a-read). After anyone else's
//     claim, or a reset, both fail and
//     change nothing. ReleaseAfterLoss removes an owner node that a moved
//     epoch left behind while it is still ours, fenced by the epoch it reads.
//   - ClaimBatch and ReleaseBatch send the claims or releases of many
//     partitions in one Multi, each partition's operations and fences
//     those of its own Claim or Release. A Multi refused by one
//     partition's node sends that partition through Claim or Release
//     alone and the rest again as one Multi, a bounded number of times;
//     any other refusal sends each partition left alone.
//   - CommitOffsetsFenced sends many partitions' fenced commits in one
//     Multi, each the pair of its own CommitOffsetFenced, and refused
//     ones alone as above; a Multi without an answer gives each commit
//     in it that error (in doubt), never a second send.
//   - Reset (ResetOffsets): each offset node is deleted in one Multi with a
//     bump of the partition's epoch, so every owner loses its claim, claims
//     again and reads the offset afresh. ResetOffset and ResetOffsetsTo set
//     offsets the same way: one Multi sets or creates the offset node and
//     bumps the epoch node, creating it if the partition was never claimed.
//     RewindOffsetFenced is the owner's own reset (an offset past the log's
//     end taken back): Multi(SetData(epoch, E), SetData(offset)), so it
//     applies only while the claim holds, and ends it.
//   - WatchClaim tells an owner, within one round trip, that its claim ended.
//   - ConfirmSession answers only when the ensemble's leader stands behind
//     the session, and SessionTimeout is the timeout the server granted: a
//     self-fence built on them pauses before the session can expire.
//
// # Rules for operators and tools
//
// The fencing holds only if every writer plays by it:
//
//   - Never delete an epoch node, even when no owner node exists: a
//     re-created epoch node starts its versions again, and an instance still
//     holding an old epoch would pass its checks.
//   - Change committed offsets only through a fenced reset (ResetOffsets,
//     ResetOffset, ResetOffsetsTo, or a Multi that also bumps the
//     partition's epoch), never by deleting
//     or setting an offset node alone while the group may run: an instance
//     whose session has just expired may still hold the latest claim, and
//     its commit would overwrite the change. CommitOffset is unfenced, as in
//     kazoo-go: use it only for groups that are not running.
//
// # Keeping the model true
//
// The claim, commit, release and reset protocol is modelled in Promela
// under model/ in the repository and checked by SPIN in CI (model/check.sh),
// including variants that reintroduce known bugs and must fail. Any change
// to the protocol here (which requests are sent, what they check, what a
// reply or an error leads to), in the consumer group's offset manager or
// partition worker, or in its session fence, changes the model in the same
// commit.
package kazoo
