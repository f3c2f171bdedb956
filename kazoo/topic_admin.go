package kazoo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-zookeeper/zk"
)

// Errors of topic administration. The first three are kazoo-go's, with the
// same names, and are returned bare where kazoo-go returned them, so ==
// works; the znode involved is logged (Config.Logger).
var (
	ErrTopicExists          = errors.New("topic already exists")
	ErrTopicMarkedForDelete = errors.New("topic is already marked for deletion")
	ErrDeletionTimedOut     = errors.New("timed out while waiting for a topic to be deleted")

	// ErrDeletionRefused: the controller removed the deletion mark but the
	// topic is still there. Kafka does this when the brokers run with
	// delete.topic.enable=false.
	ErrDeletionRefused = errors.New("the controller dropped the deletion mark but the topic remains (delete.topic.enable=false?)")
)

// MaxCreatePartitions is the largest partition count CreateTopic accepts.
// The assignment of more partitions would not fit in ZooKeeper's default
// 1 MB znode limit (jute.maxbuffer).
const MaxCreatePartitions = 100_000

// CreateTopic creates a topic the way Kafka's own ZooKeeper-based admin
// does: it assigns partitionCount partitions with replicationFactor
// replicas each to the live brokers (Kafka's rack-unaware assignment:
// leaders round-robin from a random broker, followers shifted so that no
// broker holds two replicas of a partition), then writes the configuration
// overrides to /config/topics/<name> and the assignment to
// /brokers/topics/<name>. The controller then creates the partitions; this
// call does not wait for it.
//
// Both znodes are written in one ZooKeeper transaction, so a topic that
// already exists keeps its configuration. It fails with an error wrapping
// ErrInvalidTopicName for a name Kafka refuses or one that collides with an
// existing topic ("a.b" and "a_b"). As kazoo-go, it returns these bare:
// ErrInvalidPartitionCount (also above MaxCreatePartitions),
// ErrInvalidReplicationFactor (more replicas than live brokers), and
// ErrTopicExists, also when the topic is still marked for deletion.
//
// Deprecated: writing a topic into ZooKeeper bypasses the controller's
// checks and does nothing on a KRaft cluster. Create topics through Kafka:
// sarama's ClusterAdmin.CreateTopic.
func (kz *Kazoo) CreateTopic(name string, partitionCount int, replicationFactor int, topicConfig map[string]string) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	if partitionCount <= 0 || partitionCount > MaxCreatePartitions {
		kz.logf("create topic %q: %d partitions; must be in [1, %d]", name, partitionCount, MaxCreatePartitions)
		return ErrInvalidPartitionCount
	}
	if replicationFactor <= 0 {
		kz.logf("create topic %q: replication factor %d; must be > 0", name, replicationFactor)
		return ErrInvalidReplicationFactor
	}
	for k := range topicConfig {
		if k == "" {
			return fmt.Errorf("kazoo: create topic %q: config key must not be empty", name)
		}
	}
	topicNode := kz.topicPath(name)

	// Kafka's checks: the topic, a colliding topic, a pending deletion.
	existing, err := kz.children(kz.topicsPath())
	if err != nil && !errors.Is(err, ErrNoNode) {
		return err
	}
	for _, other := range existing {
		if other == name {
			kz.logf("create topic: %s exists", topicNode)
			return ErrTopicExists
		}
		if topicNamesCollide(name, other) {
			return fmt.Errorf("%w %q: it collides with existing topic %q (Kafka treats '.' and '_' alike in metric names)", ErrInvalidTopicName, name, other)
		}
	}
	marker := kz.deleteTopicPath(name)
	if marked, err := kz.exists(marker); err != nil {
		return err
	} else if marked {
		kz.logf("create topic: %s is still marked for deletion (%s)", topicNode, marker)
		return ErrTopicExists
	}

	brokers, err := kz.brokerIDList()
	if err != nil {
		return err
	}
	if replicationFactor > len(brokers) {
		kz.logf("create topic %q: replication factor %d, %d live brokers", name, replicationFactor, len(brokers))
		return ErrInvalidReplicationFactor
	}
	n := len(brokers)
	assignment := assignReplicas(brokers, partitionCount, replicationFactor, rand.IntN(n), rand.IntN(n))

	assignmentData, err := marshalPartitionMap(assignment)
	if err != nil {
		return fmt.Errorf("kazoo: create topic %q: %w", name, err)
	}
	if topicConfig == nil {
		topicConfig = map[string]string{}
	}
	configData, err := json.Marshal(struct {
		Version int               `json:"version"`
		Config  map[string]string `json:"config"`
	}{1, topicConfig})
	if err != nil {
		return fmt.Errorf("kazoo: create topic %q: %w", name, err)
	}
	if err := kz.mkdirRecursive(kz.topicsPath()); err != nil {
		return err
	}
	if err := kz.mkdirRecursive(kz.topicConfigsPath()); err != nil {
		return err
	}
	return kz.createTopicNodes(topicNode, assignmentData, kz.topicConfigPath(name), configData)
}

// createTopicNodes writes the config (creating or overwriting a stale one)
// and creates the assignment, atomically.
func (kz *Kazoo) createTopicNodes(topicNode string, assignment []byte, configNode string, config []byte) error {
	for attempt := 0; ; attempt++ {
		configExists, err := kz.exists(configNode)
		if err != nil {
			return err
		}
		var configOp any = &zk.CreateRequest{Path: configNode, Data: config, Acl: kz.acl}
		if configExists {
			configOp = &zk.SetDataRequest{Path: configNode, Data: config, Version: -1}
		}
		res, err := kz.conn.Multi(configOp, &zk.CreateRequest{Path: topicNode, Data: assignment, Acl: kz.acl})
		if err == nil {
			return nil
		}
		// The first operation with an error is the one that failed;
		// ZooKeeper rolled back the other.
		failed, cause := topicNode, err
		for i, r := range res {
			if r.Error != nil {
				cause = r.Error
				if i == 0 {
					failed = configNode
				}
				break
			}
		}
		switch {
		case failed == topicNode && errors.Is(cause, zk.ErrNodeExists):
			kz.logf("create topic: %s was created meanwhile", topicNode)
			return ErrTopicExists
		case failed == configNode && attempt == 0 &&
			(errors.Is(cause, zk.ErrNodeExists) || errors.Is(cause, zk.ErrNoNode)):
			continue // the config node appeared or vanished meanwhile
		}
		return znodeErr("create", failed, cause)
	}
}

// assignReplicas is Kafka's rack-unaware replica assignment
// (AdminUtils.assignReplicasToBrokers): partition p's leader is broker
// (start+p) mod n; its followers follow at distinct shifts in [1, n-1] that
// advance every n partitions, so leaders and followers both spread evenly
// and no broker gets two replicas of one partition. brokers must be sorted
// and 1 <= rf <= len(brokers); start and shift are random in [0, n).
func assignReplicas(brokers []int32, partitions, rf, start, shift int) [][]int32 {
	n := len(brokers)
	result := make([][]int32, partitions)
	for p := range partitions {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + start) % n
		replicas := make([]int32, 0, rf)
		replicas = append(replicas, brokers[first])
		for j := range rf - 1 {
			s := 1 + (shift+j)%(n-1)
			replicas = append(replicas, brokers[(first+s)%n])
		}
		result[p] = replicas
	}
	return result
}

// marshalPartitionMap is the inverse of parsePartitionMap.
func marshalPartitionMap(replicas [][]int32) ([]byte, error) {
	m := make(map[string][]int32, len(replicas))
	for id, r := range replicas {
		m[itoa(int32(id))] = r
	}
	return json.Marshal(struct {
		Version    int                `json:"version"`
		Partitions map[string][]int32 `json:"partitions"`
	}{1, m})
}

// DeleteTopic asks the controller to delete the topic by creating
// /admin/delete_topics/<name>, and returns without waiting: deletion is
// asynchronous. As in kazoo-go, the topic does not have to exist (the
// controller drops a mark for a missing topic). It returns
// ErrTopicMarkedForDelete (bare) if the mark is already there.
func (kz *Kazoo) DeleteTopic(name string) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	marker := kz.deleteTopicPath(name)
	err := kz.create(marker, nil, false)
	if errors.Is(err, ErrNodeExists) {
		kz.logf("delete topic: %s exists already", marker)
		return ErrTopicMarkedForDelete
	}
	return err
}

// DeleteTopicSync is DeleteTopic followed by a wait until the controller
// has finished: the topic's assignment, its configuration and the deletion
// mark are all gone, so the name can be used again. A timeout <= 0 waits
// for ever (as kazoo-go does). It returns ErrDeletionTimedOut (bare, as
// kazoo-go) if the timeout passes first, and an error wrapping
// ErrDeletionRefused if the controller dropped the mark but kept the topic.
func (kz *Kazoo) DeleteTopicSync(name string, timeout time.Duration) error {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	err := kz.DeleteTopicContext(ctx, name)
	if errors.Is(err, ErrDeletionTimedOut) {
		kz.logf("delete topic %q: %v", name, err)
		return ErrDeletionTimedOut
	}
	return err
}

// DeleteTopicContext is DeleteTopicSync bounded by ctx instead of a
// timeout. When ctx ends first the error wraps both ErrDeletionTimedOut and
// ctx.Err(); the deletion itself goes on.
func (kz *Kazoo) DeleteTopicContext(ctx context.Context, name string) error {
	if err := kz.DeleteTopic(name); err != nil {
		return err
	}
	return kz.waitTopicDeleted(ctx, name)
}

// waitTopicDeleted waits, on watches, until the deletion mark of the topic
// is gone. The controller removes it last, after the assignment and the
// configuration.
func (kz *Kazoo) waitTopicDeleted(ctx context.Context, name string) error {
	marker, topicNode := kz.deleteTopicPath(name), kz.topicPath(name)
	for {
		marked, _, markerW, err := kz.conn.ExistsW(marker)
		if err != nil {
			return znodeErr("exists", marker, err)
		}
		if !marked {
			exists, err := kz.exists(topicNode)
			if err != nil {
				return err
			}
			if exists {
				return znodeErr("delete topic", topicNode, ErrDeletionRefused)
			}
			return nil
		}
		select {
		case <-markerW:
		case <-ctx.Done():
			return znodeErr("delete topic", topicNode, fmt.Errorf("%w: %w", ErrDeletionTimedOut, ctx.Err()))
		}
	}
}
