// Package claim claims one partition for one consumer-group instance and
// does not give up early. It knows nothing about Kafka: it drives a small
// Registry (TryClaim, WatchOwner, Release), which the kazoo package
// implements over ZooKeeper (see NewKazooRegistry) and which unit tests
// replace with a scripted fake.
//
// The ZooKeeper nodes involved (see package kazoo for the full tree):
//
//	/consumers/<group>/owners/<topic>/<partition>   EPHEMERAL, value = owner instance id
//	/consumers/<group>/epochs/<topic>/<partition>   PERSISTENT, zkVersion = claim epoch
//
// # The claim loop
//
// Claimer.Claim runs one loop, in the caller's goroutine:
//
//  1. Try to claim at once (Registry.TryClaim; one race-free attempt).
//  2. If another instance holds the partition, watch its owner node
//     (Registry.WatchOwner) and try again the moment the watch fires. A
//     watch that has not fired serves every later attempt, Claim call and
//     Keep round on that partition: while the partition is held elsewhere,
//     however long, the Claimer keeps one watch on it, not one per round.
//  3. If the owner vanished between the two calls (WatchOwner reports no
//     owner, or TryClaim fails with ErrNoNode), the partition is free now:
//     try again at once. Upstream gave up here with "node does not exist".
//     Attempts started without a backoff wait (this, and watch wake-ups)
//     are limited to a few in a row, so a flapping node cannot make the
//     loop spin.
//  4. Independently of the watch, try again on a jittered exponential
//     backoff (InitialInterval growing to MaxInterval), so a missed watch
//     costs at most MaxInterval.
//  5. Keep going for at least Config.ProcessingTimeout (the previous owner
//     may drain that long before it releases) plus Config.ExtraTime, and
//     at least Config.ExtraAttempts attempts after ProcessingTimeout.
//  6. Stop at once, with ctx's error, when ctx is cancelled (the
//     assignment changed), and at once with a *Error when an error is
//     permanent (authentication, ACL, bad arguments, malformed data, a
//     closing client, anything wrapped by Permanent). A stop after an
//     attempt whose reply was lost also wraps ErrStoppedInDoubt: that
//     attempt may have created the owner node, which the caller deletes
//     once no newer claim of its own can exist.
//
// A final failure is a *Error carrying topic, partition, attempts, elapsed
// time and cause. Claimer.Keep wraps Claim for a caller that stays assigned:
// it reports each retryable final failure through a callback, waits
// Config.RetryCooldown and claims again, until it succeeds or ctx ends.
// Claimer.Release releases a claim with the epoch-fenced primitive on its own
// bounded context, so a cancelled caller still releases.
//
// # What is guaranteed
//
//   - A returned *kazoo.PartitionClaim is one the Registry granted; the loop
//     never infers ownership from data it read.
//   - While ctx is live and no permanent error occurs, Claim keeps trying for
//     at least ProcessingTimeout+ExtraTime and ExtraAttempts attempts after
//     ProcessingTimeout. No wait between attempts exceeds MaxInterval.
//   - When the owner's node is deleted and the watch is delivered, the next
//     attempt starts immediately, not at the next backoff tick.
//   - Claim and Keep return promptly once ctx is done and leave no goroutine
//     of their own behind (an armed owner watch stays, one per partition,
//     until it fires). Release returns within Config.ReleaseTimeout, also
//     while ZooKeeper is unreachable, when its Registry honours ctx (as
//     KazooRegistry's Release does).
//   - Errors wrap their causes: errors.Is(err, kazoo.ErrClaimLost),
//     errors.Is(err, context.Canceled) and errors.As(err, &*Error) work.
//   - Keep calls its callback from its own goroutine and never blocks on a
//     channel itself; use NotifyChan for a non-blocking send.
//
// # What is not guaranteed
//
//   - Claim does not guarantee a claim: another instance may legitimately
//     hold the partition past the budget (a wrong assignment, a stuck
//     owner). Keep retries, but only while the caller keeps ctx alive.
//   - Fairness between competing claimants: whoever's create reaches
//     ZooKeeper first wins.
//   - A TryClaim or WatchOwner in flight is not interrupted by ctx: while
//     ZooKeeper is unreachable, KazooRegistry waits for the client to give
//     up on the request (an attempt abandoned in flight could still create
//     an owner node nobody knows of). Its Release stops waiting when ctx
//     ends; the abandoned call may still apply once the connection returns,
//     fenced by the claim's epoch, so a Release that timed out may have
//     released after all.
//   - If the final TryClaim succeeds while ctx is being cancelled, Claim
//     still returns the claim (it is real); the caller must Release it.
//   - A claim stays valid only as long as the ZooKeeper session that made
//     it; detecting session loss is the caller's job (package kazoo).
package claim
