package kazoo

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// WatchClaim checks that the claim still holds and arms watches that fire at
// the first change that could end it. It returns ErrClaimLost (wrapped,
// saying why) when the claim is gone already:
//
//   - the owner node is missing, or held by another session or instance
//     (an operator deleted it, the session expired, someone else claimed);
//   - the epoch node moved past the claim's epoch (another claim, or a
//     reset, which bumps every epoch), or was deleted, or was created again
//     (a different czxid, even at the same version).
//
// Otherwise the channel receives one Event when the owner node or the
// epoch node changes (or EventNotWatching when the watches are lost) and is
// then closed; call WatchClaim again to learn whether the claim survived.
// An owner therefore learns of its loss within one round trip of the
// change, whether or not it has anything to commit. Connection errors are
// returned as they are (IsRetryable).
func (cgi *ConsumergroupInstance) WatchClaim(c *PartitionClaim) (<-chan Event, error) {
	if err := cgi.checkClaim(c); err != nil {
		return nil, err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)

	// The epoch first: a claim by anyone else moves it.
	ok, estat, ew, err := kz.conn.ExistsW(epoch)
	if err != nil {
		return nil, znodeErr("exists", epoch, err)
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s: epoch node %s was deleted", ErrClaimLost, c, epoch)
	case c.EpochCzxid != 0 && estat.Czxid != c.EpochCzxid:
		return nil, fmt.Errorf("%w: %s: epoch node %s was created again (czxid %#x, claim's %#x)",
			ErrClaimLost, c, epoch, estat.Czxid, c.EpochCzxid)
	case estat.Version != c.Epoch:
		return nil, fmt.Errorf("%w: %s: epoch is now %d", ErrClaimLost, c, estat.Version)
	}

	data, ostat, ow, err := kz.conn.GetW(owner)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s: owner node %s was deleted", ErrClaimLost, c, owner)
	} else if err != nil {
		return nil, znodeErr("get", owner, err)
	}
	if string(data) != c.InstanceID || ostat.EphemeralOwner != c.SessionID {
		return nil, fmt.Errorf("%w: %s: %s is now owned by %q (session %#x)",
			ErrClaimLost, c, owner, data, ostat.EphemeralOwner)
	}
	return firstEvent(ew, ow), nil
}

// firstEvent forwards the first event of a or b, then closes. The other
// watch stays armed in the client until it fires or the session ends; both
// channels are buffered by the client, so nothing blocks on them.
func firstEvent(a, b <-chan Event) <-chan Event {
	out := make(chan Event, 1)
	go func() {
		defer close(out)
		select {
		case ev, ok := <-a:
			if ok {
				out <- ev
			}
		case ev, ok := <-b:
			if ok {
				out <- ev
			}
		}
	}()
	return out
}
