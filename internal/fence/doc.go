// Package fence keeps a consumer group instance from delivering messages
// once another instance may have claimed its partitions.
//
// A Fence watches the instance's ZooKeeper session. It trusts only answers
// the ZooKeeper leader stands behind, measures against the session timeout
// the server granted, and pauses the Gate on a deadline timer, so the pause
// lands before the earliest moment the session can expire. When the
// session did expire and was replaced, Expired says so: every claim died
// with it.
//
// A Gate is what partition workers hand messages through: while it is
// paused nothing is handed out, and a message that is no longer valid when
// it opens again is dropped rather than delivered.
//
// Not guaranteed: the pause assumes process pauses (GC, VM steal) shorter
// than the remaining budget. The proof and its limits are in
// docs/fence.md.
package fence
