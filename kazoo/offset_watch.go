package kazoo

import (
	"errors"
)

// WatchOffset is FetchOffsetVersion plus a watch: the channel receives one
// Event when the partition's offset node is next created, set or deleted,
// and is then closed. With no committed offset it returns -1, -1 and a watch
// that fires when one is. Tools and tests use it to follow commits without
// polling.
func (cg *Consumergroup) WatchOffset(topic string, partition int32) (offset int64, version int32, changed <-chan Event, err error) {
	if err := cg.check(); err != nil {
		return -1, -1, nil, err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return -1, -1, nil, err
	}
	node := cg.kz.offsetPath(cg.Name, topic, partition)
	for {
		data, stat, w, err := cg.kz.conn.GetW(node)
		if err == nil {
			offset, err := parseOffset(node, data)
			if err != nil {
				return -1, stat.Version, w, err
			}
			return offset, stat.Version, w, nil
		}
		if !errors.Is(err, ErrNoNode) {
			return -1, -1, nil, znodeErr("get", node, err)
		}
		ok, _, w, err := cg.kz.conn.ExistsW(node)
		if err != nil {
			return -1, -1, nil, znodeErr("exists", node, err)
		}
		if !ok {
			return -1, -1, w, nil
		}
		// Created between the two reads: the exists watch is set and will
		// fire on the next change; read the value with a data watch.
	}
}
