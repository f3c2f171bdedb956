package kazoo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Committed offsets live at /consumers/<group>/offsets/<topic>/<partition>
// as the ASCII decimal of the next offset to consume, as Kafka's
// high-level consumer wrote them. A node that does not hold a decimal is
// reported with its path (wrapping ErrMalformed), never skipped or guessed.

// CommitOffset stores offset (the next offset to consume) for the
// partition, creating the node and its parents if needed. It is not
// fenced: it overwrites whatever is stored. Group members that hold a
// claim should use ConsumergroupInstance.CommitOffsetFenced. A negative
// offset is refused.
//
// Deprecated: an unfenced write lets an instance that lost its claim move
// the offset back under the new owner. Commit through a claim with
// ConsumergroupInstance.CommitOffsetFenced, or change a group's offsets
// with cmd/zkgroup-offsets, which fences its writes.
func (cg *Consumergroup) CommitOffset(topic string, partition int32, offset int64) error {
	if err := cg.check(); err != nil {
		return err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("kazoo: CommitOffset %s/%d: offset must be >= 0, got %d", topic, partition, offset)
	}
	return cg.kz.createOrUpdate(cg.kz.offsetPath(cg.Name, topic, partition), []byte(strconv.FormatInt(offset, 10)), false)
}

// FetchOffset returns the committed offset (the next offset to consume) of
// the partition, or -1 if none was committed.
func (cg *Consumergroup) FetchOffset(topic string, partition int32) (int64, error) {
	offset, _, err := cg.FetchOffsetVersion(topic, partition)
	return offset, err
}

// FetchOffsetVersion is FetchOffset plus the offset node's version, to pass
// to CommitOffsetFenced. With no committed offset it returns -1, -1, nil.
func (cg *Consumergroup) FetchOffsetVersion(topic string, partition int32) (offset int64, version int32, err error) {
	if err := cg.check(); err != nil {
		return -1, -1, err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return -1, -1, err
	}
	node := cg.kz.offsetPath(cg.Name, topic, partition)
	data, stat, err := cg.kz.get(node)
	if errors.Is(err, ErrNoNode) {
		return -1, -1, nil
	} else if err != nil {
		return -1, -1, err
	}
	offset, err = parseOffset(node, data)
	if err != nil {
		return -1, -1, err
	}
	return offset, stat.Version, nil
}

// FetchAllOffsets returns every committed offset of the group, by topic and
// partition (empty if none). Nodes deleted while it reads are skipped.
func (cg *Consumergroup) FetchAllOffsets() (map[string]map[int32]int64, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	result := make(map[string]map[int32]int64)
	topics, err := cg.kz.children(cg.kz.offsetsPath(cg.Name))
	if errors.Is(err, ErrNoNode) {
		return result, nil
	} else if err != nil {
		return nil, err
	}
	for _, topic := range topics {
		topicNode := cg.kz.offsetTopicPath(cg.Name, topic)
		partitions, err := cg.kz.children(topicNode)
		if errors.Is(err, ErrNoNode) {
			continue
		} else if err != nil {
			return nil, err
		}
		offsets := make(map[int32]int64, len(partitions))
		for _, p := range partitions {
			node := topicNode + "/" + p
			id, err := strconv.ParseInt(p, 10, 32)
			if err != nil || id < 0 {
				return nil, malformed(node, "partition id %q is not a non-negative 32-bit integer", p)
			}
			data, _, err := cg.kz.get(node)
			if errors.Is(err, ErrNoNode) {
				continue
			} else if err != nil {
				return nil, err
			}
			offset, err := parseOffset(node, data)
			if err != nil {
				return nil, err
			}
			offsets[int32(id)] = offset
		}
		if len(offsets) > 0 {
			result[topic] = offsets
		}
	}
	return result, nil
}

// parseOffset parses a stored offset: an ASCII decimal >= 0, surrounding
// whitespace allowed. path names the znode in errors.
func parseOffset(path string, data []byte) (int64, error) {
	s := strings.TrimSpace(string(data))
	offset, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return -1, malformed(path, "offset %q is not a decimal integer", s)
	}
	if offset < 0 {
		return -1, malformed(path, "offset %d is negative", offset)
	}
	return offset, nil
}
