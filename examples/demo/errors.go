package main

import (
	"errors"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

// describe says in a few words what an error from Errors() means, and which
// partition it is about (-1: the whole topic or group). The causes are the
// ones docs/errors.md lists.
func describe(err error) (what string, partition int32) {
	partition = -1
	var pe *consumergroup.PartitionError
	if errors.As(err, &pe) {
		partition = pe.Partition
	}
	var conflict *consumergroup.OffsetConflictError
	var claimErr *claim.Error
	switch {
	case errors.Is(err, kazoo.ErrClaimLost):
		return "claim lost (another member claimed since): stopped without committing", partition
	case errors.As(err, &conflict):
		return "stored offset changed underneath: resumed there", partition
	case errors.As(err, &claimErr):
		return "could not claim within the claim budget: retrying after the cool-down", partition
	case errors.Is(err, kazoo.ErrMalformed):
		return "malformed znode: holding the partition", partition
	case kazoo.IsRetryable(err):
		return "ZooKeeper unreachable: commit or read failed, retried later", partition
	default:
		return err.Error(), partition
	}
}
