// Package offsets keeps the offset bookkeeping of one owned partition,
// apart from where offsets are stored and who commits them:
//
//   - Tracker: the positions delivered, marked and committed, with the
//     generations that refuse marks judged before a seek, the ceiling that
//     keeps a commit below a message taken back, and Drain, which waits
//     for what was delivered to be marked (docs/recall.md).
//   - InDoubt: the fenced commits whose reply was lost, so that a later
//     conflict showing one of them is recognised as our own write
//     (docs/in-doubt-commits.md).
//   - Redelivery: after a backward seek, a mark in the redelivered range
//     counts only for the message redelivered there, never for one
//     delivered before the seek.
//
// Offsets are "next" offsets, as ZooKeeper stores them: the offset of the
// next message to consume; a negative one means none is stored.
//
// Not here: reading or writing any store, the claim's fence, the commit
// loop; the caller does those and tells these types what happened.
package offsets
