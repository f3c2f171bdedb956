package kazoo

import "slices"

// A batch's Multi is refused as a whole when one partition's operation
// fails, and ZooKeeper names only that first failure: the operations
// before it report OK (they would have applied), those after it are not
// checked. The partition a refusal names goes alone through Claim,
// Release or CommitOffsetFenced; the rest is sent again as one Multi, for
// as long as that pays. See docs/coordination.md#claims-and-releases-in-batches.

// maxBatchRefusals bounds the refusals after which a batch stops being
// sent again (one last Multi of the partitions shown to apply may follow,
// so at most maxBatchRefusals+1 Multis are refused), and so the round
// trips its callers wait before the partitions left go alone.
const maxBatchRefusals = 16

// batchRound is what one Multi of a batch came to.
type batchRound struct {
	// done: every partition sent has its answer (the Multi applied, or an
	// error was given to each).
	done bool
	// refusedBy, when not done: the position, among the partitions sent,
	// of the one whose own operation refused the Multi; -1 when the
	// refusal names none (the reply was lost, the session changed, a
	// cause that is not one partition's).
	refusedBy int
}

// inRounds sends partitions 0 to n-1 through send, as one Multi, and
// returns the partitions left to the single Claim or Release. Each time a
// refusal names a partition, that partition is left to the single call
// and the rest is sent again, while the refusals are at most one more than
// the partitions the last refusal showed would apply (those before it)
// and fewer than maxBatchRefusals. Past that, the partitions it showed
// would apply go in one last Multi and those after it alone. A refusal
// that names none leaves every partition not yet done to the single call,
// and so does any refusal of the last Multi; a rest of one partition goes
// alone. send is given the partitions of one Multi, in order.
func inRounds(n int, send func(parts []int) batchRound) (alone []int) {
	rest := make([]int, n)
	for i := range rest {
		rest[i] = i
	}
	refusals, last := 0, false
	for len(rest) > 0 {
		r := send(rest)
		switch {
		case r.done:
			return alone
		case r.refusedBy < 0 || r.refusedBy >= len(rest) || last:
			return append(alone, rest...)
		}
		p := r.refusedBy
		refusals++
		alone = append(alone, rest[p])
		if refusals < maxBatchRefusals && refusals <= p+1 {
			rest = slices.Delete(rest, p, p+1)
		} else {
			// Retrying the rest does not pay: most of what was sent was
			// refused. Those shown to apply still go together.
			alone = append(alone, rest[p+1:]...)
			rest, last = rest[:p], true
		}
		if len(rest) == 1 {
			return append(alone, rest...)
		}
	}
	return alone
}
