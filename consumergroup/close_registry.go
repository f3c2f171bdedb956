package consumergroup

import (
	"context"
	"fmt"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/kazoo"
)

// closingRegistry is the group's claim registry, whose releases stop being
// retried once Close stopped waiting for ZooKeeper (closeExpired): the
// session is closed next, which deletes the owner node, and the claim
// loop would otherwise retry a release on the closing connection for up
// to its release timeout (the session timeout), holding Close up. A
// release that starts while the session is being closed cannot tell it
// apart from a dropped connection. See docs/shutdown.md.
type closingRegistry struct {
	claim.Registry
	closing <-chan struct{}
}

func (r closingRegistry) Release(ctx context.Context, c *kazoo.PartitionClaim) error {
	err := r.Registry.Release(ctx, c)
	if kazoo.IsRetryable(err) && isClosed(r.closing) {
		return fmt.Errorf("%w: %w", kazoo.ErrClosing, err) // permanent for the claim loop
	}
	return err
}
