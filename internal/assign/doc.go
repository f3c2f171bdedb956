// Package assign decides which instance of a consumer group consumes which
// partition. It owns the assignment strategies (range, upstream's; sticky,
// rendezvous hashing with bounded load) and what it reads from the
// instances' registrations: subscriptions (static topic lists, white_list
// and black_list expressions) and the strategies offered. It reads no
// ZooKeeper node and holds no state.
//
// Every instance computes the assignment on its own from the same input,
// so the functions here are pure: a result depends only on the sets of
// members and partitions, never on their order. Sticky is used only when
// every member's registration offers it, and range (with identical
// subscriptions, upstream's assignment) otherwise, so mixed fleets agree
// during a rolling upgrade; docs/assignment.md has the definition and the
// figures.
//
// Not here: watching for changes, claiming what was assigned, or stopping
// what moved away; the group's coordination loop does that.
package assign
