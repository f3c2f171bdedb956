package consumergroup

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/kazoo"
)

// releaseFails is a claim registry whose releases fail with err.
type releaseFails struct {
	claim.Registry
	err error
}

func (r releaseFails) Release(context.Context, *kazoo.PartitionClaim) error { return r.err }

// A release that fails on a connection being closed is retried (the claim
// loop backs off up to its release timeout) while the group runs, and not
// once Close stopped waiting for ZooKeeper: the session is closed next,
// deleting the owner node, and the retries would hold Close up.
func TestReleaseStopsRetryingOnceCloseStoppedWaiting(t *testing.T) {
	closing := make(chan struct{})
	reg := closingRegistry{Registry: releaseFails{err: zk.ErrConnectionClosed}, closing: closing}
	err := reg.Release(context.Background(), &kazoo.PartitionClaim{})
	if !claim.IsRetryable(err) {
		t.Errorf("before Close stopped waiting: %v is not retryable", err)
	}
	close(closing)
	err = reg.Release(context.Background(), &kazoo.PartitionClaim{})
	if claim.IsRetryable(err) || !claim.IsPermanent(err) {
		t.Errorf("after Close stopped waiting: %v is retryable", err)
	}
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Errorf("%v lost its cause", err)
	}
	lost := closingRegistry{Registry: releaseFails{err: kazoo.ErrClaimLost}, closing: closing}
	if err := lost.Release(context.Background(), &kazoo.PartitionClaim{}); !errors.Is(err, kazoo.ErrClaimLost) || errors.Is(err, kazoo.ErrClosing) {
		t.Errorf("a refused release became %v", err)
	}
}
