package kazoo

import (
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// commitBatchPartitions is how many partitions the batch commit tests
// commit at once.
const commitBatchPartitions = 6

// batchCommitter is instance "a" of group "g" holding partitions 0 to
// commitBatchPartitions-1 of topic "t", each with an offset node created
// by a single fenced commit, and counting the batch Multis it sends.
type batchCommitter struct {
	e        *cgEnv
	a        *ConsumergroupInstance
	claims   []*PartitionClaim
	versions []int32 // of each offset node
	sent     atomic.Int32
}

func newBatchCommitter(t *testing.T, e *cgEnv, kz *Kazoo) *batchCommitter {
	t.Helper()
	b := &batchCommitter{e: e, a: kz.Consumergroup("g").Instance("a")}
	reqs := make([]ClaimRequest, commitBatchPartitions)
	for p := range reqs {
		reqs[p] = ClaimRequest{Topic: "t", Partition: int32(p)}
	}
	for _, r := range b.a.ClaimBatch(reqs) {
		cgNoErr(t, r.Err)
		b.claims = append(b.claims, r.Claim)
	}
	// Creates go alone, as CommitOffsetFenced makes them.
	for _, r := range b.a.CommitOffsetsFenced(b.requests(func(p int) int64 { return 10 })) {
		cgNoErr(t, r.Err)
		b.versions = append(b.versions, r.NewVersion)
	}
	b.a.cg.testHook = func(s hookStep) error {
		if s == stepBatchSend {
			b.sent.Add(1)
		}
		return nil
	}
	return b
}

// requests commits offset(p) to each partition p at the version it holds.
func (b *batchCommitter) requests(offset func(p int) int64) []OffsetCommitRequest {
	reqs := make([]OffsetCommitRequest, len(b.claims))
	for p, c := range b.claims {
		v := int32(-1)
		if b.versions != nil {
			v = b.versions[p]
		}
		reqs[p] = OffsetCommitRequest{Claim: c, Offset: offset(p), ExpectedVersion: v}
	}
	return reqs
}

// offsetNode reads partition p's offset node as the admin sees it.
func (b *batchCommitter) offsetNode(p int) (string, int32, int64) {
	b.e.t.Helper()
	data, stat, err := b.e.admin.conn.Get(b.e.admin.offsetPath("g", "t", int32(p)))
	if err != nil {
		b.e.t.Fatal(err)
	}
	return string(data), stat.Version, stat.Mzxid
}

// A batch of commits applies in one Multi, one transaction (every offset
// node gets the same zxid), each node at the version its result says, and
// the next batch, at those versions, applies again.
func TestIntegrationCommitOffsetsFencedInOneMulti(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	b := newBatchCommitter(t, e, e.client())
	for round := range int64(2) {
		offset := func(p int) int64 { return 100*(round+1) + int64(p) }
		b.sent.Store(0)
		results := b.a.CommitOffsetsFenced(b.requests(offset))
		if n := b.sent.Load(); n != 1 {
			t.Fatalf("round %d: %d Multis sent for a batch of %d commits, want one", round, n, commitBatchPartitions)
		}
		var zxid int64
		for p, r := range results {
			cgNoErr(t, r.Err)
			data, version, mzxid := b.offsetNode(p)
			if r.NewVersion != b.versions[p]+1 || r.NewVersion != version || data != strconv.FormatInt(offset(p), 10) {
				t.Fatalf("round %d, partition %d: result %+v, node %q at version %d (was %d)", round, p, r, data, version, b.versions[p])
			}
			if p > 0 && mzxid != zxid {
				t.Fatalf("round %d: partition %d written by transaction %#x, partition 0 by %#x: not one Multi", round, p, mzxid, zxid)
			}
			zxid = mzxid
			b.versions[p] = r.NewVersion
		}
	}
}

// A batch with one claim lost (its epoch moved) and one offset node at
// another version: those two get exactly CommitOffsetFenced's answers, and
// the rest apply together, in the third Multi (two refused before it).
func TestIntegrationCommitOffsetsFencedRefusals(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	b := newBatchCommitter(t, e, e.client())
	const lost, conflicting = 1, 3
	if _, err := e.admin.conn.Set(e.admin.epochPath("g", "t", lost), nil, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.conn.Set(e.admin.offsetPath("g", "t", conflicting), []byte("77"), -1); err != nil {
		t.Fatal(err)
	}
	reqs := b.requests(func(p int) int64 { return 200 + int64(p) })
	results := b.a.CommitOffsetsFenced(reqs)
	if n := b.sent.Load(); n != 3 {
		t.Errorf("%d Multis sent, want 3: refused by the lost claim, by the conflict, then applied", n)
	}

	cgWantErr(t, results[lost].Err, ErrClaimLost)
	var conflict *OffsetConflictError
	if !errors.As(results[conflicting].Err, &conflict) || conflict.Stored != 77 || conflict.Version != b.versions[conflicting]+1 {
		t.Fatalf("conflicting partition: %+v, want an *OffsetConflictError holding 77", results[conflicting])
	}
	for _, p := range []int{lost, conflicting} {
		// Nothing changed since: the single call answers the same.
		r := reqs[p]
		v, err := b.a.CommitOffsetFenced(r.Claim, r.Offset, r.ExpectedVersion)
		if results[p].NewVersion != v || err == nil || results[p].Err.Error() != err.Error() {
			t.Errorf("partition %d: batch answered %d, %v; CommitOffsetFenced %d, %v", p, results[p].NewVersion, results[p].Err, v, err)
		}
	}
	var zxid int64
	for _, p := range []int{0, 2, 4, 5} {
		cgNoErr(t, results[p].Err)
		data, version, mzxid := b.offsetNode(p)
		if results[p].NewVersion != version || data != strconv.FormatInt(reqs[p].Offset, 10) {
			t.Fatalf("partition %d: result %+v, node %q at version %d", p, results[p], data, version)
		}
		if zxid != 0 && mzxid != zxid {
			t.Fatalf("the applied commits were not one transaction: %#x and %#x", zxid, mzxid)
		}
		zxid = mzxid
	}
	if data, _, _ := b.offsetNode(lost); data != "10" {
		t.Fatalf("the lost claim's offset node holds %q, want 10: a commit past a moved epoch applied", data)
	}
}

// Requests CommitOffsetFenced refuses before sending get its errors, and
// do not keep the rest from their Multi.
func TestIntegrationCommitOffsetsFencedInvalidRequests(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	b := newBatchCommitter(t, e, e.client())
	reqs := b.requests(func(p int) int64 { return 300 })
	reqs[1].Offset = -5
	reqs[2].ExpectedVersion = -2
	reqs[3].Claim = nil
	other := *b.claims[4]
	other.InstanceID = "b"
	reqs[4].Claim = &other
	results := b.a.CommitOffsetsFenced(reqs)
	for p := 1; p <= 4; p++ {
		r := reqs[p]
		_, err := b.a.CommitOffsetFenced(r.Claim, r.Offset, r.ExpectedVersion)
		if err == nil || results[p].Err == nil || results[p].Err.Error() != err.Error() || results[p].NewVersion != -1 {
			t.Errorf("request %d: batch answered %d, %v; CommitOffsetFenced %v", p, results[p].NewVersion, results[p].Err, err)
		}
	}
	for _, p := range []int{0, 5} {
		cgNoErr(t, results[p].Err)
		if data, version, _ := b.offsetNode(p); data != "300" || version != results[p].NewVersion {
			t.Fatalf("partition %d: node %q at version %d, result %+v", p, data, version, results[p])
		}
	}
	if n := b.sent.Load(); n != 1 {
		t.Fatalf("%d Multis sent, want one for the two valid commits", n)
	}
}

// A batch's Multi whose reply is lost (the proxy swallows it, then drops
// the connection) gives every commit in it an error that is neither a
// refusal nor a conflict, as a single commit's lost reply does: each is in
// doubt. None is sent again, and the Multi applied all or none.
func TestIntegrationCommitOffsetsFencedLostReply(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz, proxy := e.proxiedClient(10 * time.Second)
	b := newBatchCommitter(t, e, kz)
	lr := &lostReplyBatch{kz: kz, proxy: proxy}
	lr.loseReplies()
	results := b.a.CommitOffsetsFenced(b.requests(func(p int) int64 { return 400 }))
	if n := b.sent.Load(); n != 1 {
		t.Fatalf("%d Multis sent, want one: a commit in doubt must not be sent again", n)
	}
	var zxid int64
	for p, r := range results {
		if r.Err == nil || r.NewVersion != -1 || errors.Is(r.Err, ErrClaimLost) || errors.Is(r.Err, ErrOffsetConflict) {
			t.Fatalf("partition %d: %d, %v; want the lost reply's error", p, r.NewVersion, r.Err)
		}
		var zerr *ZnodeError
		if !errors.As(r.Err, &zerr) || zerr.Op != "commit" || zerr.Path != e.admin.offsetPath("g", "t", int32(p)) {
			t.Fatalf("partition %d: %v, want a commit error naming its offset node", p, r.Err)
		}
		_, _, mzxid := b.offsetNode(p)
		if p > 0 && mzxid != zxid {
			t.Fatalf("partition %d last written by %#x, partition 0 by %#x: the Multi applied in part", p, mzxid, zxid)
		}
		zxid = mzxid
	}
	data, _, _ := b.offsetNode(0)
	t.Logf("the lost Multi applied: %v", data == "400")
}
