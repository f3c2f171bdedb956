package kazoo

import (
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// The race-free claim primitives:
//
//   - Claim = Multi(Create(owner, EPHEMERAL), SetData(owner, 0),
//     SetData(epoch, -1)); the epoch node's new version is the claim's
//     epoch, and the owner node is at version 1, which only claims make.
//   - An existing owner node is ours only if it holds our id AND its
//     Stat.EphemeralOwner is our current session. Our id under another
//     session is a stale node of an older session of ours: it is removed
//     with its exact version, fenced by the epoch. Not for a static
//     instance, whose id another live instance may hold: it waits.
//   - Release = Multi(Check(epoch, E), Delete(owner, version)), first at
//     the version the claim made (no read), then at the version read, and
//     CommitOffsetFenced = Multi(Check(epoch, E), SetData(offset, version)):
//     after anyone else's claim they fail and change nothing.

// claimAttempts bounds how often one Claim (or release) starts over after
// the owner node changed underneath it.
const claimAttempts = 3

// ErrClaimContended: a claim or release gave up after claimAttempts
// attempts because the owner node kept changing underneath. It is
// transient (IsRetryable): try again.
var ErrClaimContended = errors.New("kazoo: owner node kept changing")

// Claim makes one attempt to claim the partition for this instance under
// this client's current ZooKeeper session, and returns the claim that
// fences its commits and its release. In one Multi it creates the
// ephemeral owner node (holding ID) and bumps the partition's epoch; the
// claim carries the new epoch.
//
// If the owner node exists, it is read, and:
//   - gone by then (the owner just left): the create is tried again;
//   - holding ID and owned by the current session (a claim again, or an
//     earlier claim whose reply was lost): the epoch is bumped and a new
//     claim returned; any earlier claim of it stops fencing;
//   - holding ID but owned by another session: a stale node of an older
//     session of ours (a restarted process, a client cut off past its
//     session timeout). It is deleted with its exact version, fenced by the
//     epoch, and the create tried again. Two live clients using one
//     instance id therefore take partitions from each other; the epoch
//     keeps their commits apart;
//   - otherwise the error wraps ErrPartitionClaimedByOther and names the
//     owner and its session.
//
// The owner node vanishing or changing repeatedly ends the attempt with an
// error wrapping ErrClaimContended. That error and connection failures
// satisfy IsRetryable.
func (cgi *ConsumergroupInstance) Claim(topic string, partition int32) (*PartitionClaim, error) {
	if err := cgi.check(); err != nil {
		return nil, err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return nil, err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, topic, partition)
	epoch := kz.epochPath(cgi.cg.Name, topic, partition)
	id := []byte(cgi.ID)
	newClaim := func(sid int64, e *zk.Stat, ownerVersion int32) *PartitionClaim {
		return &PartitionClaim{Topic: topic, Partition: partition, InstanceID: cgi.ID, SessionID: sid,
			Epoch: e.Version, EpochCzxid: e.Czxid, OwnerVersion: ownerVersion}
	}

	setups := 0 // parents created; bounded separately from contention
	for attempt := 0; attempt < claimAttempts; {
		sid := kz.SessionID()
		resp, err := kz.conn.Multi(claimOps(owner, epoch, id, kz.acl)...)
		if err == nil {
			if err := cgi.cg.hook(stepClaimSent); err != nil {
				return nil, znodeErr("claim", owner, err)
			}
			if kz.SessionID() != sid {
				// The session was replaced meanwhile: whose node is it?
				attempt++
				continue
			}
			return newClaim(sid, resp[claimEpochOp].Stat, claimedOwnerVersion), nil
		}

		op := failedOp(resp)
		switch {
		case op == 0 && errors.Is(err, zk.ErrNodeExists):
			attempt++
			e, ownerVersion, ours, err := cgi.resolveClaimed(owner, epoch, sid)
			if err != nil {
				return nil, err
			}
			if ours {
				return newClaim(sid, e, ownerVersion), nil
			}
			continue // the node vanished or was stale: create again
		case (op == 0 || op == claimEpochOp) && errors.Is(err, zk.ErrNoNode) && setups < claimAttempts:
			// First claim of this topic or partition: create the parents
			// of the owner node and the epoch node.
			setups++
			if err := kz.mkdirRecursive(path.Dir(owner)); err != nil {
				return nil, err
			}
			if err := kz.ensureNode(epoch); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, znodeErr("claim", owner, err)
		}
	}
	return nil, znodeErr("claim", owner, fmt.Errorf("%w after %d attempts", ErrClaimContended, claimAttempts))
}

// claimEpochOp is the index of the epoch's SetData in claimOps.
const claimEpochOp = 2

// claimedOwnerVersion is the owner node's version after claimOps.
const claimedOwnerVersion = 1

// claimOps are one claim's operations: create the ephemeral owner node
// holding id, set it once (so it is at version 1, which no upstream member
// or operator's tool makes, and a release can delete it without reading
// it), and bump the epoch.
func claimOps(owner, epoch string, id []byte, acl []zk.ACL) []any {
	return []any{
		&zk.CreateRequest{Path: owner, Data: id, Acl: acl, Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: owner, Data: id, Version: 0},
		&zk.SetDataRequest{Path: epoch, Data: id, Version: -1},
	}
}

// resolveClaimed decides, after a claim met an existing owner node, whether
// the node is ours (then it returns the freshly bumped epoch's stat, the
// owner node's version and true), someone else's (an error wrapping
// ErrPartitionClaimedByOther), or gone or stale (false, nil: create
// again). sid is our current session.
func (cgi *ConsumergroupInstance) resolveClaimed(owner, epoch string, sid int64) (*zk.Stat, int32, bool, error) {
	kz := cgi.kz()
	if err := cgi.cg.hook(stepClaimExists); err != nil {
		return nil, 0, false, znodeErr("get", owner, err)
	}
	// The epoch first: any claim after this read moves it, so every write
	// below fenced by this version fails if someone claimed meanwhile.
	ok, estat, err := kz.conn.Exists(epoch)
	if err != nil {
		return nil, 0, false, znodeErr("exists", epoch, err)
	}
	if !ok {
		return nil, 0, false, kz.ensureNode(epoch) // try again with an epoch node
	}
	data, stat, err := kz.conn.Get(owner)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, 0, false, nil // the owner just left
	} else if err != nil {
		return nil, 0, false, znodeErr("get", owner, err)
	}

	mine := string(data) == cgi.ID
	switch {
	case mine && sid != 0 && stat.EphemeralOwner == sid:
		// Ours already (an earlier claim whose reply was lost, or a claim
		// again): bump the epoch while nothing else changes.
		resp, err := kz.conn.Multi(
			&zk.CheckVersionRequest{Path: owner, Version: stat.Version},
			&zk.SetDataRequest{Path: epoch, Data: data, Version: estat.Version},
		)
		if err == nil {
			if kz.SessionID() != sid {
				return nil, 0, false, nil
			}
			return resp[1].Stat, stat.Version, true, nil
		}
		if failedOp(resp) >= 0 && (errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion)) {
			return nil, 0, false, nil
		}
		return nil, 0, false, znodeErr("claim", owner, err)

	case mine && stat.EphemeralOwner != 0 && cgi.static:
		// A static id under another session may be another live instance
		// with our id (we are about to be fenced), or a crashed predecessor
		// whose session expires soon: never take its node, wait for it.
		return nil, 0, false, fmt.Errorf("%w: %s is owned by our static id %q under session %#x, not ours (%#x)",
			ErrPartitionClaimedByOther, owner, data, stat.EphemeralOwner, sid)

	case mine && stat.EphemeralOwner != 0:
		// Our id under another session: a stale node of an older session
		// of ours. Remove exactly that node, unless anyone claimed since.
		resp, err := kz.conn.Multi(
			&zk.CheckVersionRequest{Path: epoch, Version: estat.Version},
			&zk.DeleteRequest{Path: owner, Version: stat.Version},
		)
		if err == nil || failedOp(resp) >= 0 && (errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion)) {
			return nil, 0, false, nil
		}
		return nil, 0, false, znodeErr("delete", owner, err)

	default:
		return nil, 0, false, claimedByOther(owner, data, stat)
	}
}

// claimedByOther is the error of a claim that met owner held by another
// instance (data, its id; stat, its node's).
func claimedByOther(owner string, data []byte, stat *zk.Stat) error {
	return fmt.Errorf("%w: %s is owned by %q (session %#x)", ErrPartitionClaimedByOther, owner, data, stat.EphemeralOwner)
}

// Release gives up the claim: it deletes the owner node, fenced by the
// claim's epoch, and only if the node belongs to the claim's session and
// instance. If the epoch moved (someone claimed since) the error wraps
// ErrClaimLost and nothing is deleted. If the owner node is already gone
// and the epoch has not moved, the partition is released: nil.
//
// A claim that knows its owner node's version (OwnerVersion), made under
// the current session by an instance this client registered, is first
// released without a read: Multi(Check(registration), Check(epoch,
// Epoch), Delete(owner, OwnerVersion)). While the epoch is the claim's, a
// node at that version is the claim's own (see
// PartitionClaim.OwnerVersion); the registration, gone with an expired
// session, keeps a request the client sends under the next session from
// applying. A refusal or a lost reply falls back to reading the node, as
// for any other claim. See docs/coordination.md#releases-without-a-read.
func (cgi *ConsumergroupInstance) Release(c *PartitionClaim) error {
	return cgi.release(c, true)
}

// release is Release; unread says whether it may first delete at the
// claim's OwnerVersion without reading the node (ReleaseBatch's fallback
// for a claim its Multi refused reads).
func (cgi *ConsumergroupInstance) release(c *PartitionClaim, unread bool) error {
	if err := cgi.checkClaim(c); err != nil {
		return err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)
	if unread && c.OwnerVersion > 0 && cgi.releasesUnread(c.SessionID) {
		if err := cgi.cg.hook(stepReleaseDelete); err != nil {
			return znodeErr("delete", owner, err)
		}
		if _, err := kz.conn.Multi(append([]any{cgi.registrationFence()}, releaseOps(c, owner, epoch, c.OwnerVersion)...)...); err == nil {
			return nil
		}
		// Refused (the epoch moved, the node went or is not the claim's) or
		// lost in flight: the reads below tell which.
	}
	for range claimAttempts {
		data, stat, err := kz.conn.Get(owner)
		if errors.Is(err, zk.ErrNoNode) {
			ok, estat, err := kz.conn.Exists(epoch)
			if err != nil {
				return znodeErr("exists", epoch, err)
			}
			if ok && estat.Version == c.Epoch {
				return nil
			}
			return cgi.claimLost(c, epoch)
		} else if err != nil {
			return znodeErr("get", owner, err)
		}
		if string(data) != c.InstanceID || stat.EphemeralOwner != c.SessionID {
			return fmt.Errorf("%w: %s: %s is now owned by %q (session %#x)",
				ErrClaimLost, c, owner, data, stat.EphemeralOwner)
		}
		if err := cgi.cg.hook(stepReleaseDelete); err != nil {
			return znodeErr("delete", owner, err)
		}
		resp, err := kz.conn.Multi(releaseOps(c, owner, epoch, stat.Version)...)
		switch op := failedOp(resp); {
		case err == nil:
			return nil
		case op == 0 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
			return cgi.claimLost(c, epoch)
		case op == 1 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
			continue // the owner node changed or went: look again
		default:
			return znodeErr("release", owner, err)
		}
	}
	return znodeErr("release", owner, fmt.Errorf("%w after %d attempts", ErrClaimContended, claimAttempts))
}

// releaseOps are the operations of c's release: Check(epoch, c.Epoch),
// Delete(owner, version), at the version read or, without a read, at
// c.OwnerVersion. A release without a read puts them after
// registrationFence in its Multi: the version tells our node from an
// upstream member's, the epoch from a later claim's, but neither tells the
// claim's session from a later one after the group was deleted (the epoch
// node made again, its versions reused).
// Only a request of the claim's session can find the instance's
// registration, which went with that session: the client's next session
// registers again only after the requests it queued while cut off went
// out. See docs/coordination.md#releases-without-a-read.
func releaseOps(c *PartitionClaim, owner, epoch string, version int32) []any {
	return []any{
		&zk.CheckVersionRequest{Path: epoch, Version: c.Epoch},
		&zk.DeleteRequest{Path: owner, Version: version},
	}
}

// registrationFence is the check, first in a Multi of releases without a
// read, that the instance's registration exists (any version).
func (cgi *ConsumergroupInstance) registrationFence() any {
	return &zk.CheckVersionRequest{Path: cgi.regPath(), Version: -1}
}

// CommitOffsetFenced stores offset (the next offset to consume) as the
// partition's committed offset, if and only if the claim still holds (the
// epoch has not moved) and the offset node's version is expectedVersion.
// expectedVersion -1 means the node does not exist yet; it is then created
// (with its parents). It returns the node's new version, to pass to the
// next commit.
//
// If the epoch moved the error wraps ErrClaimLost and nothing changed. If
// the offset node is not at expectedVersion (an operator reset it, or it
// was deleted, or it exists when -1 was expected) the error is an
// *OffsetConflictError holding what is stored now; nothing changed.
//
// The node stays a plain ASCII decimal written by a real set, so tools such
// as Burrow read its value and mtime as they always did.
func (cgi *ConsumergroupInstance) CommitOffsetFenced(c *PartitionClaim, offset int64, expectedVersion int32) (newVersion int32, err error) {
	if err := cgi.checkClaim(c); err != nil {
		return -1, err
	}
	if offset < 0 {
		return -1, fmt.Errorf("kazoo: CommitOffsetFenced %s: offset must be >= 0, got %d", c, offset)
	}
	if expectedVersion < -1 {
		return -1, fmt.Errorf("kazoo: CommitOffsetFenced %s: expectedVersion must be >= -1, got %d", c, expectedVersion)
	}
	kz := cgi.kz()
	node := kz.offsetPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)
	data := []byte(strconv.FormatInt(offset, 10))
	check := &zk.CheckVersionRequest{Path: epoch, Version: c.Epoch}

	for range claimAttempts {
		var write any = &zk.SetDataRequest{Path: node, Data: data, Version: expectedVersion}
		if expectedVersion == -1 {
			if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
				return -1, err
			}
			write = &zk.CreateRequest{Path: node, Data: data, Acl: kz.acl}
		}
		resp, err := kz.conn.Multi(check, write)
		op := failedOp(resp)
		switch {
		case err == nil && expectedVersion == -1:
			return 0, nil
		case err == nil:
			return resp[1].Stat.Version, nil
		case op == 0 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
			return -1, cgi.claimLost(c, epoch)
		case op == 1 && expectedVersion == -1 && errors.Is(err, zk.ErrNoNode):
			continue // the topic's offsets directory was removed meanwhile (a reset): create it again
		case op == 1 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists)):
			return -1, cgi.offsetConflict(c, epoch)
		default:
			return -1, znodeErr("commit", node, err)
		}
	}
	return -1, znodeErr("commit", node, fmt.Errorf("%w: offsets directory kept vanishing", ErrClaimContended))
}

// RewindOffsetFenced stores offset as the partition's committed offset
// although it may be lower than what is stored, the way a reset does: in
// one transaction it bumps the epoch node from the claim's epoch (so the
// claim ends, and so does every commit in flight under it) and sets the
// offset node at expectedVersion (-1: creates it). The owner uses it when
// its stored offset lies past the log's end (a truncated or re-created
// topic) and Offsets.Initial takes it back: a lower offset is written only
// with an epoch bump, as by an operator's reset, and only while the claim
// holds. After it the caller claims again.
//
// If the epoch moved the error wraps ErrClaimLost; if the offset node is
// not at expectedVersion the error is an *OffsetConflictError. Either way
// nothing changed.
func (cgi *ConsumergroupInstance) RewindOffsetFenced(c *PartitionClaim, offset int64, expectedVersion int32) error {
	if err := cgi.checkClaim(c); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("kazoo: RewindOffsetFenced %s: offset must be >= 0, got %d", c, offset)
	}
	kz := cgi.kz()
	node := kz.offsetPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)
	data := []byte(strconv.FormatInt(offset, 10))
	var write any = &zk.SetDataRequest{Path: node, Data: data, Version: expectedVersion}
	if expectedVersion == -1 {
		if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
			return err
		}
		write = &zk.CreateRequest{Path: node, Data: data, Acl: kz.acl}
	}
	resp, err := kz.conn.Multi(&zk.SetDataRequest{Path: epoch, Data: []byte(c.InstanceID), Version: c.Epoch}, write)
	switch op := failedOp(resp); {
	case err == nil:
		return nil
	case op == 0 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
		return cgi.claimLost(c, epoch)
	case op == 1 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists)):
		return cgi.offsetConflict(c, epoch)
	default:
		return znodeErr("rewind", node, err)
	}
}

// offsetConflict reads what the offset node holds after a fenced write
// found it at another version, and returns it as an *OffsetConflictError,
// or an error wrapping ErrClaimLost if the epoch moved by then. The epoch
// is read after the offset node, so the value read is no reset's. See
// docs/in-doubt-commits.md.
func (cgi *ConsumergroupInstance) offsetConflict(c *PartitionClaim, epoch string) error {
	if err := cgi.cg.hook(stepConflictRead); err != nil {
		return err
	}
	stored, version, err := cgi.cg.FetchOffsetVersion(c.Topic, c.Partition)
	if err != nil {
		return err
	}
	ok, estat, err := cgi.kz().conn.Exists(epoch)
	switch {
	case err != nil:
		return znodeErr("exists", epoch, err)
	case !ok || estat.Version != c.Epoch:
		return cgi.claimLost(c, epoch)
	}
	return &OffsetConflictError{Topic: c.Topic, Partition: c.Partition, Stored: stored, Version: version}
}

func (cgi *ConsumergroupInstance) checkClaim(c *PartitionClaim) error {
	if err := cgi.check(); err != nil {
		return err
	}
	if c == nil {
		return errors.New("kazoo: nil *PartitionClaim")
	}
	if c.InstanceID != cgi.ID {
		return fmt.Errorf("kazoo: claim %s is not instance %q's", c, cgi.ID)
	}
	return checkTopicPartition(c.Topic, c.Partition)
}

// claimLost returns an error wrapping ErrClaimLost that says where the
// epoch is now.
func (cgi *ConsumergroupInstance) claimLost(c *PartitionClaim, epoch string) error {
	now := "gone"
	switch ok, stat, err := cgi.kz().conn.Exists(epoch); {
	case err != nil:
		now = fmt.Sprintf("unknown (%v)", err)
	case ok:
		now = strconv.FormatInt(int64(stat.Version), 10)
	}
	return fmt.Errorf("%w: %s: epoch is now %s", ErrClaimLost, c, now)
}

// failedOp returns the index of the operation that made a Multi fail, or -1
// if none reports an error (the request as a whole failed: connection lost,
// session expired). ZooKeeper reports the operations before the failed one
// as OK and those after it as rolled back, so the first error is the cause.
func failedOp(resp []zk.MultiResponse) int {
	for i, r := range resp {
		if r.Error != nil {
			return i
		}
	}
	return -1
}

// ensureNode creates the persistent, empty node and its parents; a node
// that exists is fine.
func (kz *Kazoo) ensureNode(node string) error {
	if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
		return err
	}
	_, err := kz.conn.Create(node, nil, 0, kz.acl)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return znodeErr("create", node, err)
}

// ReleaseAfterLoss deletes the owner node of a claim that was lost although
// the node survived: the epoch moved (a reset bumps it, as may an operator)
// while the node still holds this instance's id under the claim's session.
// Nobody else can delete that node, and nobody can claim the partition
// while it exists, so without this the partition would stay unowned for as
// long as the session lives.
//
// The deletion is one Multi: a Check of the epoch version read just before
// and a Delete of the node at its exact version, so a claim by anyone in
// between makes it fail and delete nothing. It must only be used once no
// newer claim of this instance under the same session can exist (the
// caller's successor for the partition has not claimed yet): such a claim
// looks exactly like the lost one's node. A node that is gone, or owned by
// another session or instance, is left alone: nil.
func (cgi *ConsumergroupInstance) ReleaseAfterLoss(c *PartitionClaim) error {
	if err := cgi.checkClaim(c); err != nil {
		return err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)
	for range claimAttempts {
		ok, estat, err := kz.conn.Exists(epoch)
		if err != nil {
			return znodeErr("exists", epoch, err)
		}
		data, stat, err := kz.conn.Get(owner)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		} else if err != nil {
			return znodeErr("get", owner, err)
		}
		if string(data) != c.InstanceID || stat.EphemeralOwner != c.SessionID {
			return nil
		}
		ops := []any{&zk.DeleteRequest{Path: owner, Version: stat.Version}}
		if ok {
			ops = append([]any{&zk.CheckVersionRequest{Path: epoch, Version: estat.Version}}, ops...)
		}
		resp, err := kz.conn.Multi(ops...)
		switch {
		case err == nil:
			return nil
		case failedOp(resp) >= 0 && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)):
			continue // the epoch or the node moved meanwhile: look again
		default:
			return znodeErr("delete", owner, err)
		}
	}
	return znodeErr("delete", owner, fmt.Errorf("%w after %d attempts", ErrClaimContended, claimAttempts))
}
