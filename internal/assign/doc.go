// Package assign decides which instance of a consumer group consumes which
// partition. It owns the assignment strategies and the subscriptions read
// from the instances' registrations (static topic lists, white_list and
// black_list expressions), and nothing else: it reads no ZooKeeper node and
// holds no state.
//
// Every instance computes the assignment on its own from the same input,
// so the functions here are pure: a result depends only on the sets of
// members and partitions, never on their order. With identical
// subscriptions the result is upstream's assignment, so mixed fleets agree
// during a rolling upgrade.
//
// Not here: watching for changes, claiming what was assigned, or stopping
// what moved away; the group's coordination loop does that.
package assign
