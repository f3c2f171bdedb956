package kazoo

import (
	"strconv"

	"github.com/go-zookeeper/zk"
)

// Fenced offset commits of many partitions in one transaction. Each
// commit is CommitOffsetFenced's Check(epoch, E) then SetData(offset,
// expected version), only sent together in one Multi: it applies all of
// them or none. A Multi refused by one commit's operation sends that
// commit through CommitOffsetFenced alone and the rest again as one Multi
// (claim_batch_rounds.go). A Multi without an answer gives every commit
// in it the error, as a single commit whose reply was lost: each is in
// doubt, never sent again here. See
// docs/coordination.md#offset-commits-in-batches.

// OffsetCommitRequest is one fenced commit for CommitOffsetsFenced: the
// arguments of CommitOffsetFenced.
type OffsetCommitRequest struct {
	Claim           *PartitionClaim // the claim that fences the commit
	Offset          int64           // the next offset to consume
	ExpectedVersion int32           // the offset node's version; -1: it does not exist yet
}

// OffsetCommitResult is CommitOffsetsFenced's answer for one request:
// what CommitOffsetFenced would have returned for it alone.
type OffsetCommitResult struct {
	NewVersion int32 // the offset node's version after the commit; -1 on error
	Err        error
}

// CommitOffsetsFenced makes each commit of reqs, as CommitOffsetFenced
// does, and returns their results in reqs' order. The commits of existing
// offset nodes (ExpectedVersion >= 0) are sent in one Multi (per MaxBatch
// of them, fewer for long paths) of the pairs CommitOffsetFenced sends,
// each fenced by its own claim's epoch and its own node's version. A
// commit whose epoch moved or whose node is at another version refuses
// that Multi: it goes through CommitOffsetFenced alone, which tells which
// (ErrClaimLost, *OffsetConflictError), and the rest is sent again as one
// Multi (a bounded number of times, see inRounds). Commits that create
// their node (ExpectedVersion -1), those with an invalid argument, and
// those left after the bound go through CommitOffsetFenced alone,
// concurrently.
//
// A Multi that gets no answer (the connection dropped with it in flight)
// may or may not have applied: every commit in it gets that error, as a
// single commit whose reply was lost gets it, and none is sent again.
func (cgi *ConsumergroupInstance) CommitOffsetsFenced(reqs []OffsetCommitRequest) []OffsetCommitResult {
	out := make([]OffsetCommitResult, len(reqs))
	var batched, alone []int // indices into reqs
	for i, r := range reqs {
		if r.ExpectedVersion >= 0 && r.Offset >= 0 && cgi.checkClaim(r.Claim) == nil {
			batched = append(batched, i)
		} else {
			alone = append(alone, i)
		}
	}
	if len(batched) > 0 {
		kz := cgi.kz()
		inBatches(len(batched), func(k int) int {
			c := reqs[batched[k]].Claim
			return len(kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)) + len(kz.offsetPath(cgi.cg.Name, c.Topic, c.Partition)) + 20
		}, func(start, end int) {
			alone = append(alone, cgi.commitBatch(reqs, batched[start:end], out)...)
		})
	}
	each(len(alone), func(k int) {
		r := reqs[alone[k]]
		v, err := cgi.CommitOffsetFenced(r.Claim, r.Offset, r.ExpectedVersion)
		out[alone[k]] = OffsetCommitResult{NewVersion: v, Err: err}
	})
	return out
}

// commitBatch commits reqs[batch] in rounds of one Multi, fills out for
// those answered, and returns those left to CommitOffsetFenced. A batch
// of one is CommitOffsetFenced's own request.
func (cgi *ConsumergroupInstance) commitBatch(reqs []OffsetCommitRequest, batch []int, out []OffsetCommitResult) (alone []int) {
	if len(batch) < 2 {
		return batch
	}
	for _, k := range inRounds(len(batch), func(parts []int) batchRound { return cgi.commitInOneMulti(reqs, batch, parts, out) }) {
		alone = append(alone, batch[k])
	}
	return alone
}

// commitInOneMulti sends the commits reqs[batch[k]] for each k of parts
// in one Multi. Applied, each gets its offset node's new version; refused
// by an operation, the refusal names that commit; without an answer, each
// gets the error.
func (cgi *ConsumergroupInstance) commitInOneMulti(reqs []OffsetCommitRequest, batch, parts []int, out []OffsetCommitResult) batchRound {
	kz := cgi.kz()
	ops := make([]any, 0, 2*len(parts))
	for _, k := range parts {
		r := reqs[batch[k]]
		c := r.Claim
		ops = append(ops,
			&zk.CheckVersionRequest{Path: kz.epochPath(cgi.cg.Name, c.Topic, c.Partition), Version: c.Epoch},
			&zk.SetDataRequest{Path: kz.offsetPath(cgi.cg.Name, c.Topic, c.Partition),
				Data: []byte(strconv.FormatInt(r.Offset, 10)), Version: r.ExpectedVersion},
		)
	}
	if cgi.cg.hook(stepBatchSend) != nil {
		return batchRound{refusedBy: -1} // nothing sent
	}
	resp, err := kz.conn.Multi(ops...)
	if err == nil {
		for j, k := range parts {
			out[batch[k]] = OffsetCommitResult{NewVersion: resp[2*j+1].Stat.Version}
		}
		return batchRound{done: true}
	}
	if op := failedOp(resp); op >= 0 {
		// Refused, so nothing applied: CommitOffsetFenced gives the
		// refused commit its precise answer.
		return batchRound{refusedBy: op / 2}
	}
	// No answer: maybe applied. Sent again, a commit that did apply would
	// meet its own write as a conflict; as CommitOffsetFenced does, each
	// reports the error and its caller holds it in doubt
	// (docs/in-doubt-commits.md).
	for _, k := range parts {
		c := reqs[batch[k]].Claim
		out[batch[k]] = OffsetCommitResult{NewVersion: -1, Err: znodeErr("commit", kz.offsetPath(cgi.cg.Name, c.Topic, c.Partition), err)}
	}
	return batchRound{done: true}
}
