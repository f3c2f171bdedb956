// Package worker runs the partition workers of a consumer group instance.
//
// A Worker owns one assigned partition for as long as it stays assigned
// to the instance: it claims it, reads and tracks its committed offset,
// fetches and hands messages to a Sink, and on stop drains, commits and
// releases it. One goroutine drives it through the lifecycle table (Next:
// states × events); every other party (the manage loop, the claim watch,
// the committer, the delivery gate) talks to it through its Inbox, and
// posting never blocks. Sweep starts a stand-in worker that deletes an
// owner node a worker left behind.
//
// A worker is given what it uses as a Config and a Deps of small
// interfaces: the claimer, the registry, the session, the committer, the
// fetch engine, the gate and the sink.
//
// A buffered Messages() is one channel every partition shares, an
// Outbox: a worker takes back only its own partition's messages from it,
// and the other partitions' stay in their order (docs/recall.md, "A
// shared buffer").
//
// Guaranteed: a claim's buffer never outlives the claim, nothing is
// drained or committed once the claim may be gone, and no owner node of
// ours outlives its worker unswept. Not guaranteed: a message handed out
// before the instance was fenced off is not taken back from a reader that
// already has it. The event map, the recall and the release are in
// docs/worker.md, docs/recall.md and docs/owner-release.md.
package worker
