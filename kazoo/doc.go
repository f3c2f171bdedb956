// Package kazoo reads and writes the Kafka metadata and the consumer-group
// state kept in ZooKeeper, with the API of github.com/wvanbergen/kazoo-go:
// code written for kazoo-go compiles and behaves the same after changing
// its import paths (kazoo-go's zk package becomes github.com/go-zookeeper/zk).
//
// The tree it uses, below Config.Chroot:
//
//	/controller                              the controller broker (read)
//	/brokers/ids/<id>                        broker registrations (read)
//	/brokers/topics/<topic>                  partition assignments
//	/brokers/topics/<topic>/partitions/<p>/state  leader and ISR (read)
//	/config/topics/<topic>                   topic configuration
//	/admin/delete_topics/<topic>             deletion marks
//	/consumers/<group>/ids/<instance>        EPHEMERAL registration JSON
//	/consumers/<group>/owners/<topic>/<p>    EPHEMERAL, the owning instance id
//	/consumers/<group>/offsets/<topic>/<p>   PERSISTENT, decimal next offset
//	/consumers/<group>/epochs/<topic>/<p>    PERSISTENT, its version is the claim epoch
//
// Errors. Where kazoo-go returned one of its own errors
// (ErrInstanceNotRegistered, ErrPartitionClaimedByOther, ErrTopicExists,
// ...), the same method returns that value bare, so callers may compare
// with ==; the details (which znode, which session holds it) go to
// Config.Logger. Errors from ZooKeeper come wrapped in a *ZnodeError that
// names the znode: compare them with errors.Is (ErrNoNode is zk.ErrNoNode).
// Methods kazoo-go did not have (Claim, Release, CommitOffsetFenced, ...)
// wrap every error with its details.
//
// Watches. Every Watch method returns a channel of zk.Event (Event is the
// same type) that receives one event and is then closed. EventNotWatching
// means the watch was lost with the connection: read again.
//
// Ownership. A registration or an owner node belongs to the ZooKeeper
// session that created it (Stat.EphemeralOwner), not to whoever holds the
// same instance id: a claim is an atomic create of the owner node plus a
// bump of the partition's epoch node, and commits and releases are fenced
// by that epoch.
package kazoo
