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
//
// The channel is fed by a goroutine of its own until a watch fires or the
// client is closed (EventNotWatching); WatchClaimNodes hands out the two
// watches instead, for callers that follow many claims at once.
func (cgi *ConsumergroupInstance) WatchClaim(c *PartitionClaim) (<-chan Event, error) {
	w, err := cgi.WatchClaimNodes(c)
	if err != nil {
		return nil, err
	}
	return firstEvent(cgi.kz().dialCtx.Done(), w.Epoch, w.Owner), nil
}

// ClaimWatches are the two one-shot watches WatchClaimNodes arms. Each
// receives one Event when its node changes (or EventNotWatching when the
// watches are lost) and is then closed; the client buffers both, so one
// left unread blocks nothing.
type ClaimWatches struct {
	Epoch <-chan Event // the partition's epoch node
	Owner <-chan Event // the partition's owner node
}

// WatchClaimNodes is WatchClaim without the goroutine that merges the two
// watches: the first of them to fire (or close) says the claim may have
// ended; call it again to learn whether the claim survived. A process
// following thousands of claims saves a goroutine, and its stack, per
// claim.
func (cgi *ConsumergroupInstance) WatchClaimNodes(c *PartitionClaim) (ClaimWatches, error) {
	if err := cgi.checkClaim(c); err != nil {
		return ClaimWatches{}, err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, c.Topic, c.Partition)
	epoch := kz.epochPath(cgi.cg.Name, c.Topic, c.Partition)

	// The epoch first: a claim by anyone else moves it.
	ok, estat, ew, err := kz.conn.ExistsW(epoch)
	if err != nil {
		return ClaimWatches{}, znodeErr("exists", epoch, err)
	}
	switch {
	case !ok:
		return ClaimWatches{}, fmt.Errorf("%w: %s: epoch node %s was deleted", ErrClaimLost, c, epoch)
	case c.EpochCzxid != 0 && estat.Czxid != c.EpochCzxid:
		return ClaimWatches{}, fmt.Errorf("%w: %s: epoch node %s was created again (czxid %#x, claim's %#x)",
			ErrClaimLost, c, epoch, estat.Czxid, c.EpochCzxid)
	case estat.Version != c.Epoch:
		return ClaimWatches{}, fmt.Errorf("%w: %s: epoch is now %d", ErrClaimLost, c, estat.Version)
	}

	data, ostat, ow, err := kz.conn.GetW(owner)
	if errors.Is(err, zk.ErrNoNode) {
		return ClaimWatches{}, fmt.Errorf("%w: %s: owner node %s was deleted", ErrClaimLost, c, owner)
	} else if err != nil {
		return ClaimWatches{}, znodeErr("get", owner, err)
	}
	if string(data) != c.InstanceID || ostat.EphemeralOwner != c.SessionID {
		return ClaimWatches{}, fmt.Errorf("%w: %s: %s is now owned by %q (session %#x)",
			ErrClaimLost, c, owner, data, ostat.EphemeralOwner)
	}
	return ClaimWatches{Epoch: ew, Owner: ow}, nil
}

// firstEvent forwards the first event of a or b, then closes. The other
// watch stays armed in the client until it fires or the session ends; both
// channels are buffered by the client, so nothing blocks on them. When
// closed is closed first (the client's Close), it hands out
// EventNotWatching: go-zookeeper v1.0.4's loop can block after Close
// before it closes its watch channels (docs/shutdown.md).
func firstEvent(closed <-chan struct{}, a, b <-chan Event) <-chan Event {
	out := make(chan Event, 1)
	go func() {
		defer close(out)
		select {
		case <-closed:
			out <- Event{Type: EventNotWatching, State: zk.StateDisconnected, Err: zk.ErrClosing}
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
