package kazoo

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
)

// setAttempts bounds how often a fenced set starts over after the offset
// or epoch node appeared or vanished between its reads and its transaction.
const setAttempts = 10

// setConcurrency bounds the fenced sets ResetOffsetsTo has in flight at
// once. The ZooKeeper client pipelines concurrent requests on its one
// connection, so a bulk set costs about one round trip per this many
// partitions.
const setConcurrency = 64

// ResetOffset stores offset (the next offset to consume) as the
// partition's committed offset, fenced: in one transaction it sets (or
// creates) the offset node and bumps the partition's epoch node (creating
// it if the partition never had one). Any member that owns the partition
// loses its claim at that moment: its commits in flight are refused, it
// claims again and reads the new offset. This is the way for operators and
// tools to change an offset while the group may run; CommitOffset is not.
//
// Epoch nodes are never deleted. A node that appears or vanishes between
// the reads and the transaction (a first commit, a concurrent reset) makes
// it look again; after repeated changes the error wraps ErrClaimContended.
// A negative offset is refused.
func (cg *Consumergroup) ResetOffset(topic string, partition int32, offset int64) error {
	if err := cg.check(); err != nil {
		return err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("kazoo: ResetOffset %s/%d: offset must be >= 0, got %d", topic, partition, offset)
	}
	return cg.setFenced(topic, partition, offset)
}

// ResetOffsetsTo is ResetOffset for many partitions (offsets by topic and
// partition). The transactions are independent and sent concurrently, so
// the whole takes a few round trips rather than one per partition. Every
// argument is checked before anything is written. The error joins one
// error per partition that could not be set, each naming its znode;
// partitions it does not name were set.
func (cg *Consumergroup) ResetOffsetsTo(offsets map[string]map[int32]int64) error {
	if err := cg.check(); err != nil {
		return err
	}
	type job struct {
		topic     string
		partition int32
		offset    int64
	}
	var jobs []job
	for topic, parts := range offsets {
		for p, off := range parts {
			if err := checkTopicPartition(topic, p); err != nil {
				return err
			}
			if off < 0 {
				return fmt.Errorf("kazoo: ResetOffsetsTo %s/%d: offset must be >= 0, got %d", topic, p, off)
			}
			jobs = append(jobs, job{topic, p, off})
		}
	}
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].topic != jobs[j].topic {
			return jobs[i].topic < jobs[j].topic
		}
		return jobs[i].partition < jobs[j].partition
	})

	errs := make([]error, len(jobs))
	sem := make(chan struct{}, setConcurrency)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = cg.setFenced(j.topic, j.partition, j.offset)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setFenced is one partition's fenced set: Multi(SetData or Create of the
// offset node, SetData or Create of the epoch node).
func (cg *Consumergroup) setFenced(topic string, partition int32, offset int64) error {
	kz := cg.kz
	data := []byte(strconv.FormatInt(offset, 10))
	return cg.fencedOffsetChange(topic, partition, setAttempts, func(node, epoch string, hasOffset, hasEpoch bool) ([]any, error) {
		var ops []any
		if hasOffset {
			ops = append(ops, &zk.SetDataRequest{Path: node, Data: data, Version: -1})
		} else {
			if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
				return nil, err
			}
			ops = append(ops, &zk.CreateRequest{Path: node, Data: data, Acl: kz.acl})
		}
		if hasEpoch {
			ops = append(ops, &zk.SetDataRequest{Path: epoch, Data: []byte("reset"), Version: -1})
		} else {
			// No claim ever happened. Creating the node here fails (and the
			// transaction with it) if a claim creates it first; the next
			// round then bumps it.
			if err := kz.mkdirRecursive(path.Dir(epoch)); err != nil {
				return nil, err
			}
			ops = append(ops, &zk.CreateRequest{Path: epoch, Acl: kz.acl})
		}
		return ops, nil
	})
}

// fencedOffsetChange runs one fenced change of a partition's offset node:
// it reads whether the offset and epoch nodes exist, asks ops for the
// transaction, and sends it as one Multi. A node (or a parent) that appears
// or vanishes between the reads and the Multi makes it look again, at most
// attempts times; after that the error wraps ErrClaimContended. ops
// returning no operation means there is nothing to change.
func (cg *Consumergroup) fencedOffsetChange(topic string, partition int32, attempts int,
	ops func(node, epoch string, hasOffset, hasEpoch bool) ([]any, error)) error {
	kz := cg.kz
	node := kz.offsetPath(cg.Name, topic, partition)
	epoch := kz.epochPath(cg.Name, topic, partition)
	for range attempts {
		hasOffset, _, err := kz.conn.Exists(node)
		if err != nil {
			return znodeErr("exists", node, err)
		}
		hasEpoch, _, err := kz.conn.Exists(epoch)
		if err != nil {
			return znodeErr("exists", epoch, err)
		}
		txn, err := ops(node, epoch, hasOffset, hasEpoch)
		if err != nil || len(txn) == 0 {
			return err
		}
		if err := cg.hook(stepResetRead); err != nil {
			return znodeErr("reset", node, err)
		}
		resp, err := kz.conn.Multi(txn...)
		if err == nil {
			return nil
		}
		if failedOp(resp) >= 0 && (errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists)) {
			continue // a node (or a parent) appeared or vanished meanwhile: look again
		}
		return znodeErr("reset", node, err)
	}
	return znodeErr("reset", node, fmt.Errorf("%w: nodes kept changing", ErrClaimContended))
}
