// Package coord runs a consumer group instance's coordination loop: it
// watches the group's registered instances and their subscriptions in
// ZooKeeper, hears of partition and leader changes from a topic source,
// computes this instance's assignment (package assign), and starts or
// stops only the partitions that move.
//
// The loop keeps these rules:
//
//   - Partitions kept through a rebalance keep flowing; partitions lost
//     are stopped (drained, committed and released by their worker);
//     partitions gained are started, each waiting for a predecessor of
//     ours still stopping on the same partition.
//   - After the session expired and was replaced, every partition is
//     stopped without a commit or release (the claims died with the
//     session), and the instance registers again.
//   - An owner node of this session that an ended worker may have left is
//     swept once no worker of ours wants its partition, so no partition
//     stays unowned while the session lives.
//   - A worker that ended on its own is started again while the partition
//     is still assigned here: at once when its claim ended, after a
//     cool-down after any other failure.
//   - An absent static member whose reservation exists is a member until
//     its grace window ends: its share is left unclaimed. The first
//     instance whose window ends deletes the reservation, fenced by its
//     version (docs/static-members.md).
//   - An instance whose static id another session registered while its
//     own registration was gone is fenced: it stops every partition and
//     claims nothing more.
//   - A view asks the topic source for every partition's leader only when
//     the strategy in effect orders partitions by leader; otherwise for
//     the leaders of the partitions consumed here, read once they are
//     claimed and open (docs/coordination.md, "Round trips per
//     rebalance").
//
// The loop drives workers through Workers and Worker, reads ZooKeeper
// through ZooKeeper, and reports through funcs it is given; it knows
// nothing of how a worker claims, consumes or commits.
//
// Each event and what the loop does with it: docs/coordination.md.
//
// Not guaranteed: that the assignment is current. A watch can be lost; the
// loop also re-reads on a timer, and the claims, not this package, keep
// two instances off one partition.
package coord
