package kazoo

import (
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Claims and releases of many partitions in one transaction. Each
// partition's operations are exactly those of Claim and Release, with the
// same fences (the epoch's version, the owner node's version, the
// session), only sent together in one Multi: it applies all of them or
// none. A Multi refused by one partition's own node (an owner node exists,
// an epoch moved) sends that partition through Claim or Release and the
// rest again as one Multi (claim_batch_rounds.go); after any other refusal
// (a parent is missing, the connection dropped) each partition left goes
// through Claim or Release on its own, which resolves it as before. See
// docs/coordination.md#claims-and-releases-in-batches.

// MaxBatch is the most partitions ClaimBatch and ReleaseBatch put in one
// Multi (claimOpsPerPartition and two operations each); fewer when their
// paths are long (see maxMultiBytes).
const MaxBatch = 256

// maxMultiBytes bounds what one batch's Multi carries (paths, data, ACLs):
// half of ZooKeeper's default jute.maxbuffer of 1 MiB. The server drops
// the connection of a longer request, and every request in flight with it,
// which long group, topic or instance names would otherwise reach.
const maxMultiBytes = 512 << 10

// claimOpsPerPartition is how many operations claimOps holds.
const claimOpsPerPartition = 3

// multiOpBytes is what one operation of a Multi carries besides its
// strings: the Multi's header, the lengths, the version or flags.
const multiOpBytes = 32

// inBatches calls run for consecutive ranges [start, end) of n partitions,
// each of at most MaxBatch partitions and, by size(i) (partition i's
// strings for its operations, and multiOpBytes for each beyond two), at
// most maxMultiBytes; a partition bigger than that alone goes in a range
// of its own.
func inBatches(n int, size func(i int) int, run func(start, end int)) {
	for start := 0; start < n; {
		end, bytes := start, 0
		for end < n && end-start < MaxBatch {
			b := size(end) + 2*multiOpBytes
			if end > start && bytes+b > maxMultiBytes {
				break
			}
			bytes += b
			end++
		}
		run(start, end)
		start = end
	}
}

// aclBytes is what acl adds to a create request.
func aclBytes(acl []zk.ACL) int {
	n := 4
	for _, a := range acl {
		n += 12 + len(a.Scheme) + len(a.ID)
	}
	return n
}

// ClaimRequest names one partition for ClaimBatch.
type ClaimRequest struct {
	Topic     string
	Partition int32
	// Watch asks, for a partition the batch finds held by another
	// instance, for a watch on its owner node with the answer
	// (ClaimResult.OwnerWatch). A caller that already waits on one leaves
	// it false: each watch holds a registration in the client until the
	// node changes.
	Watch bool
}

// ClaimResult is ClaimBatch's answer for one partition: what Claim would
// have returned.
type ClaimResult struct {
	Claim *PartitionClaim
	Err   error
	// OwnerWatch, when not nil, is a watch the batch armed on the owner
	// node while it read it, with Err wrapping ErrPartitionClaimedByOther:
	// it fires when that node changes or goes, as WatchPartitionOwner's
	// does, so the caller need not read the node again to wait for it.
	OwnerWatch <-chan Event
}

// ClaimBatch claims each partition of reqs, as Claim does, and returns
// their results in reqs' order. All of them are first tried in one Multi
// (per MaxBatch of them, fewer for long paths) of the creates and epoch
// bumps Claim sends. A partition whose owner node exists refuses that
// Multi: it is claimed by Claim and the rest sent again in one Multi
// (a bounded number of times, see inRounds). Every partition left after a
// refusal of another cause, or after the session changed while a Multi
// was in flight, is claimed by Claim, concurrently (ZooKeeper pipelines
// the requests of one session), and gets Claim's answer.
func (cgi *ConsumergroupInstance) ClaimBatch(reqs []ClaimRequest) []ClaimResult {
	out := make([]ClaimResult, len(reqs))
	kz := cgi.kz()
	id := len(cgi.ID)
	inBatches(len(reqs), func(i int) int {
		r := reqs[i]
		owner := len(kz.ownerPath(cgi.cg.Name, r.Topic, r.Partition))
		return 2*owner + len(kz.epochPath(cgi.cg.Name, r.Topic, r.Partition)) + 3*id + aclBytes(kz.acl) + multiOpBytes
	}, func(start, end int) {
		cgi.claimBatch(reqs[start:end], out[start:end])
	})
	return out
}

func (cgi *ConsumergroupInstance) claimBatch(reqs []ClaimRequest, out []ClaimResult) {
	alone := make([]int, len(reqs))
	for i := range alone {
		alone[i] = i
	}
	if len(reqs) > 1 && cgi.check() == nil && allValid(reqs) {
		alone = inRounds(len(reqs), func(parts []int) batchRound { return cgi.claimInOneMulti(reqs, parts, out) })
		alone = cgi.answerHeldByOthers(reqs, alone, out)
	}
	each(len(alone), func(i int) {
		r := reqs[alone[i]]
		c, err := cgi.Claim(r.Topic, r.Partition)
		out[alone[i]] = ClaimResult{Claim: c, Err: err}
	})
}

// answerHeldByOthers reads the owner node of each partition of alone (the
// reads pipelined on the session) and answers those another instance
// holds as Claim answers once its create met the node: an error wrapping
// ErrPartitionClaimedByOther. Nothing is written for them, so nothing can
// be owned twice. A request with Watch reads with a watch on the node,
// passed on with the answer (ClaimResult.OwnerWatch), so the caller's
// claim loop waits on it instead of reading the node again. It returns
// the partitions left to Claim: free, of our id, or not read. A joiner's
// batch meets every partition still held by the member it takes them
// from, and one Claim each (a create, an exists, a read) held the batch,
// and every claim queued behind it, for 100 ms at 256 partitions. See
// docs/coordination.md#claims-and-releases-in-batches.
func (cgi *ConsumergroupInstance) answerHeldByOthers(reqs []ClaimRequest, alone []int, out []ClaimResult) []int {
	if len(alone) == 0 {
		return alone
	}
	kz := cgi.kz()
	answered := make([]bool, len(alone))
	each(len(alone), func(i int) {
		r := reqs[alone[i]]
		owner := kz.ownerPath(cgi.cg.Name, r.Topic, r.Partition)
		var (
			data  []byte
			stat  *zk.Stat
			watch <-chan Event
			err   error
		)
		if r.Watch {
			data, stat, watch, err = kz.conn.GetW(owner)
		} else {
			data, stat, err = kz.conn.Get(owner)
		}
		if err != nil || string(data) == cgi.ID {
			return // gone, ours (Claim tells which session's), or unread: Claim decides
		}
		out[alone[i]] = ClaimResult{Err: claimedByOther(owner, data, stat), OwnerWatch: watch}
		answered[i] = true
	})
	left := alone[:0:0]
	for i, p := range alone {
		if !answered[i] {
			left = append(left, p)
		}
	}
	return left
}

// allValid reports whether every request names a valid topic and
// partition; Claim reports those that do not.
func allValid(reqs []ClaimRequest) bool {
	for _, r := range reqs {
		if checkTopicPartition(r.Topic, r.Partition) != nil {
			return false
		}
	}
	return true
}

// claimInOneMulti sends the claims of reqs[parts] in one Multi and fills
// their out if it applied under an unchanged session. A refusal by a
// partition's create (its owner node exists) names that partition.
func (cgi *ConsumergroupInstance) claimInOneMulti(reqs []ClaimRequest, parts []int, out []ClaimResult) batchRound {
	kz := cgi.kz()
	id := []byte(cgi.ID)
	ops := make([]any, 0, claimOpsPerPartition*len(parts))
	for _, i := range parts {
		r := reqs[i]
		ops = append(ops, claimOps(kz.ownerPath(cgi.cg.Name, r.Topic, r.Partition), kz.epochPath(cgi.cg.Name, r.Topic, r.Partition), id, kz.acl)...)
	}
	if cgi.cg.hook(stepBatchSend) != nil {
		return batchRound{refusedBy: -1}
	}
	sid := kz.SessionID()
	resp, err := kz.conn.Multi(ops...)
	if err != nil {
		// Refused as a whole: nothing applied. Lost in flight (no answer
		// for any operation): maybe applied; Claim finds our nodes under
		// this session as ours, and older sessions' as stale.
		if op := failedOp(resp); op >= 0 && op%claimOpsPerPartition == 0 && errors.Is(err, zk.ErrNodeExists) {
			return batchRound{refusedBy: op / claimOpsPerPartition}
		}
		return batchRound{refusedBy: -1}
	}
	if err := cgi.cg.hook(stepClaimSent); err != nil {
		for _, i := range parts {
			r := reqs[i]
			out[i] = ClaimResult{Err: znodeErr("claim", kz.ownerPath(cgi.cg.Name, r.Topic, r.Partition), err)}
		}
		return batchRound{done: true}
	}
	if kz.SessionID() != sid {
		return batchRound{refusedBy: -1} // the session was replaced meanwhile: whose nodes are they? Claim finds out
	}
	for k, i := range parts {
		r := reqs[i]
		e := resp[claimOpsPerPartition*k+claimEpochOp].Stat
		out[i] = ClaimResult{Claim: &PartitionClaim{Topic: r.Topic, Partition: r.Partition, InstanceID: cgi.ID,
			SessionID: sid, Epoch: e.Version, EpochCzxid: e.Czxid, OwnerVersion: claimedOwnerVersion}}
	}
	return batchRound{done: true}
}

// ReleaseBatch releases each claim of cs, as Release does, and returns
// their errors in cs' order. The owner node of a claim that knows its
// version (OwnerVersion) is not read; the others are read first (the
// reads are pipelined), and those that belong to their claim's session
// and instance join the batch. The batch is one Multi (per MaxBatch
// claims, fewer for long paths) of Release's fenced deletes,
// Check(epoch, claim's epoch) then Delete(owner, version). A claim whose
// epoch or owner node moved refuses that Multi: it goes through Release's
// reads and the rest is sent again in one Multi (a bounded number of
// times, see inRounds). A claim whose node was not read as its own, and
// every claim left after a refusal of another cause, goes through Release
// on its own, reading its node, and gets Release's answer.
func (cgi *ConsumergroupInstance) ReleaseBatch(cs []*PartitionClaim) []error {
	out := make([]error, len(cs))
	kz := cgi.kz()
	inBatches(len(cs), func(i int) int {
		c := cs[i]
		if c == nil {
			return 0
		}
		return len(kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)) + len(kz.epochPath(cgi.cg.Name, c.Topic, c.Partition))
	}, func(start, end int) {
		cgi.releaseBatch(cs[start:end], out[start:end])
	})
	return out
}

func (cgi *ConsumergroupInstance) releaseBatch(cs []*PartitionClaim, out []error) {
	if len(cs) < 2 {
		for i, c := range cs {
			out[i] = cgi.Release(c)
		}
		return
	}
	kz := cgi.kz()
	// The fenced delete of each claim that knows its owner node's version
	// or whose node reads as its own; nil: Release alone.
	pairs := make([][]any, len(cs))
	var unknown []int // the claims whose owner node is read first
	unread := false   // a delete without a read is in the batch: fenced by the registration
	for i, c := range cs {
		switch {
		case cgi.checkClaim(c) != nil:
		case c.OwnerVersion > 0 && cgi.releasesUnread(c.SessionID): // as in release
			unread = true
			pairs[i] = releaseOps(c, kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition), kz.epochPath(cgi.cg.Name, c.Topic, c.Partition), c.OwnerVersion)
		default:
			unknown = append(unknown, i)
		}
	}
	each(len(unknown), func(k int) {
		c := cs[unknown[k]]
		owner := kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)
		data, stat, err := kz.conn.Get(owner)
		if err != nil || string(data) != c.InstanceID || stat.EphemeralOwner != c.SessionID {
			return
		}
		pairs[unknown[k]] = releaseOps(c, owner, kz.epochPath(cgi.cg.Name, c.Topic, c.Partition), stat.Version)
	})
	var batched []int  // the claims in the batch, in cs' order
	var fenced [][]any // their fenced deletes
	for i, p := range pairs {
		if p != nil {
			batched = append(batched, i)
			fenced = append(fenced, p)
		}
	}
	done := make([]bool, len(cs))
	if len(batched) > 0 && cgi.cg.hook(stepReleaseDelete) == nil {
		for _, i := range batched {
			done[i] = true
		}
		var prefix []any
		if unread {
			prefix = []any{cgi.registrationFence()}
		}
		for _, k := range inRounds(len(fenced), func(parts []int) batchRound { return cgi.releaseInOneMulti(prefix, fenced, parts) }) {
			done[batched[k]] = false
		}
	}
	each(len(cs), func(i int) {
		if !done[i] {
			out[i] = cgi.release(cs[i], false) // reading: the batch sent what needs no read
		}
	})
}

// releaseInOneMulti sends prefix (nil, or the registration fence) and the
// fenced deletes of fenced[parts] in one Multi. A refusal by a partition's
// own nodes (its epoch moved, its owner node changed or went) names that
// partition; a refusal by the prefix, none.
func (cgi *ConsumergroupInstance) releaseInOneMulti(prefix []any, fenced [][]any, parts []int) batchRound {
	ops := make([]any, 0, len(prefix)+2*len(parts))
	ops = append(ops, prefix...)
	for _, k := range parts {
		ops = append(ops, fenced[k]...)
	}
	if cgi.cg.hook(stepBatchSend) != nil {
		return batchRound{refusedBy: -1}
	}
	resp, err := cgi.kz().conn.Multi(ops...)
	op := failedOp(resp)
	switch {
	case err == nil:
		return batchRound{done: true}
	case op >= len(prefix) && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
		return batchRound{refusedBy: (op - len(prefix)) / 2}
	default:
		// Refused by the registration fence (each claim is then released
		// reading its node), or lost in flight: maybe applied, and Release
		// finds the node gone under the epoch it fenced with: released.
		return batchRound{refusedBy: -1}
	}
}

// each runs f(0) to f(n-1) concurrently and waits for them.
func each(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}
