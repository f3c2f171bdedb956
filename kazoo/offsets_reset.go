package kazoo

import (
	"errors"
	"path"
	"slices"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// ResetOffsets deletes every committed offset of the group (the nodes
// below /consumers/<group>/offsets). Members then start where their
// configuration says (Offsets.Initial).
//
// A reset fences the partitions' owners: each offset node is deleted in one
// transaction with a bump of the partition's epoch node, so a member that
// owns the partition loses its claim at that moment, claims again and reads
// the (now missing) offset, instead of overwriting the reset with a commit
// it had in flight. Epoch nodes are never deleted. A partition that has an
// epoch node but no offset node gets its epoch bumped too, so a commit
// about to create its first offset node is refused as well.
func (cg *Consumergroup) ResetOffsets() error {
	if err := cg.check(); err != nil {
		return err
	}
	kz := cg.kz
	topics, err := unionChildren(kz, kz.offsetsPath(cg.Name), kz.epochsPath(cg.Name))
	if err != nil {
		return err
	}
	for _, topic := range topics {
		parts, err := unionChildren(kz, kz.offsetTopicPath(cg.Name, topic), kz.epochTopicPath(cg.Name, topic))
		if err != nil {
			return err
		}
		for _, p := range parts {
			id, err := strconv.ParseInt(p, 10, 32)
			if err != nil || id < 0 {
				return malformed(kz.offsetTopicPath(cg.Name, topic)+"/"+p, "partition id %q is not a non-negative 32-bit integer", p)
			}
			if err := cg.resetPartition(topic, int32(id)); err != nil {
				return err
			}
		}
		// The topic's offsets folder, now empty (a commit racing the reset
		// may have created a node again: that commit was fenced, so the
		// node is only left if its writer claimed after the reset).
		node := kz.offsetTopicPath(cg.Name, topic)
		if err := kz.conn.Delete(node, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			return znodeErr("delete", node, err)
		}
	}
	return nil
}

// resetPartition deletes one partition's offset node and bumps its epoch in
// one transaction. Either node may be missing; it retries when one appears
// or vanishes meanwhile. A missing offset node is created and deleted in the
// same transaction, so a commit creating it just before cannot survive.
func (cg *Consumergroup) resetPartition(topic string, partition int32) error {
	kz := cg.kz
	return cg.fencedOffsetChange(topic, partition, claimAttempts, func(offset, epoch string, hasOffset, hasEpoch bool) ([]any, error) {
		var ops []any
		if hasOffset {
			ops = append(ops, &zk.DeleteRequest{Path: offset, Version: -1})
		}
		if hasEpoch && !hasOffset {
			// Nothing to delete, but the owner's first commit may create the
			// node before this transaction bumps the epoch that fences it.
			// Creating and deleting the node here makes the transaction fail
			// (NodeExists) if it did; the next round deletes it.
			if err := kz.mkdirRecursive(path.Dir(offset)); err != nil {
				return nil, err
			}
			ops = append(ops, &zk.CreateRequest{Path: offset, Acl: kz.acl}, &zk.DeleteRequest{Path: offset, Version: 0})
		}
		if hasEpoch {
			ops = append(ops, &zk.SetDataRequest{Path: epoch, Data: []byte("reset"), Version: -1})
		}
		return ops, nil
	})
}

// unionChildren lists the children of every existing node among paths,
// sorted and without duplicates.
func unionChildren(kz *Kazoo, paths ...string) ([]string, error) {
	var out []string
	for _, p := range paths {
		c, err := kz.children(p)
		if errors.Is(err, ErrNoNode) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, c...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
