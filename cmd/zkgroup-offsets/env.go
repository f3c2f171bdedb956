package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// env is a subcommand's connections: ZooKeeper through kazoo and Kafka
// through sarama.
type env struct {
	kz     *kazoo.Kazoo
	client sarama.Client
	admin  sarama.ClusterAdmin // made on first use; owns client then
}

// connect opens ZooKeeper and a Kafka client.
func (c *cli) connect() (*env, error) {
	version, err := sarama.ParseKafkaVersion(c.kafkaVersion)
	if err != nil {
		return nil, usageError{msg: fmt.Sprintf("-kafka-version: %v", err), usage: c.printUsage}
	}
	zkConf, err := c.sec.ZK()
	if err != nil {
		return nil, err
	}
	kz, err := kazoo.NewKazooFromConnectionString(c.zookeeper, zkConf)
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper at %s: %w", c.zookeeper, err)
	}
	brokers := splitList(c.brokers)
	if len(brokers) == 0 {
		if brokers, err = kz.BrokerList(); err != nil {
			kz.Close()
			return nil, fmt.Errorf("list brokers in ZooKeeper: %w", err)
		}
		if len(brokers) == 0 {
			kz.Close()
			return nil, errors.New("no Kafka broker is registered in ZooKeeper (give -brokers)")
		}
	}
	conf := sarama.NewConfig()
	conf.ClientID = "zkgroup-offsets"
	conf.Version = version
	// Looking a topic up must never create it.
	conf.Metadata.AllowAutoTopicCreation = false
	if err := c.sec.Kafka(conf); err != nil {
		kz.Close()
		return nil, err
	}
	client, err := sarama.NewClient(brokers, conf)
	if err != nil {
		kz.Close()
		return nil, fmt.Errorf("connect to Kafka at %v: %w", brokers, err)
	}
	return &env{kz: kz, client: client}, nil
}

func (e *env) close() {
	if e.admin != nil {
		_ = e.admin.Close()
	} else {
		_ = e.client.Close()
	}
	_ = e.kz.Close()
}

// clusterAdmin returns the Kafka admin client, made from the env's client.
func (e *env) clusterAdmin() (sarama.ClusterAdmin, error) {
	if e.admin == nil {
		a, err := sarama.NewClusterAdminFromClient(e.client)
		if err != nil {
			return nil, fmt.Errorf("Kafka admin client: %w", err)
		}
		e.admin = a
	}
	return e.admin, nil
}

// existingGroup returns the ZooKeeper group, or an error if it does not
// exist.
func (e *env) existingGroup(name string) (*kazoo.Consumergroup, error) {
	cg := e.kz.Consumergroup(name)
	exists, err := cg.Exists()
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("consumer group %q does not exist in ZooKeeper (no %s/consumers/%s)", name, e.kz.Chroot(), name)
	}
	return cg, nil
}

// groupOffsets returns the existing ZooKeeper group and every offset it
// committed.
func (e *env) groupOffsets(name string) (*kazoo.Consumergroup, map[string]map[int32]int64, error) {
	cg, err := e.existingGroup(name)
	if err != nil {
		return nil, nil, err
	}
	committed, err := cg.FetchAllOffsets()
	if err != nil {
		return nil, nil, fmt.Errorf("offsets of group %s: %w", cg.Name, err)
	}
	return cg, committed, nil
}

// namedPartitions returns the partitions offsets names for topic, sorted,
// or an error if the cluster lacks the topic or one of them.
func (e *env) namedPartitions(topic string, offsets map[int32]int64) ([]int32, error) {
	all, err := e.partitions(topic)
	if err != nil {
		return nil, err
	}
	want := make([]int32, 0, len(offsets))
	for p := range offsets {
		want = append(want, p)
	}
	sortInt32(want)
	if _, err := selectPartitions(topic, all, want); err != nil {
		return nil, err
	}
	return want, nil
}

// groupTopics returns the topics of a group: those it committed offsets
// for, has claimed partitions of, or whose registered instances subscribe
// to, sorted.
func groupTopics(cg *kazoo.Consumergroup, committed map[string]map[int32]int64) ([]string, error) {
	topics := make(map[string]bool)
	for t := range committed {
		topics[t] = true
	}
	owned, err := cg.Topics()
	if err != nil {
		return nil, fmt.Errorf("owners of group %s: %w", cg.Name, err)
	}
	for _, t := range owned {
		topics[t.Name] = true
	}
	subscribed, err := cg.OnlineTopics()
	if err != nil {
		return nil, fmt.Errorf("subscriptions of group %s: %w", cg.Name, err)
	}
	for t := range subscribed {
		topics[t] = true
	}
	out := make([]string, 0, len(topics))
	for t := range topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// errNoTopic is wrapped by the error for a topic the cluster does not have.
var errNoTopic = errors.New("topic does not exist")

// partitions returns the topic's partition ids as ZooKeeper lists them,
// sorted, or an error wrapping errNoTopic.
func (e *env) partitions(topic string) ([]int32, error) {
	if err := kazoo.ValidateTopicName(topic); err != nil {
		return nil, err
	}
	list, err := e.kz.Topic(topic).Partitions()
	if errors.Is(err, kazoo.ErrNoNode) {
		return nil, fmt.Errorf("%w: %q is not in the cluster", errNoTopic, topic)
	} else if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	ids := make([]int32, 0, len(list))
	for _, p := range list {
		ids = append(ids, p.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// errNoPartition is wrapped by the error for a partition a topic does not
// have.
var errNoPartition = errors.New("partition does not exist")

// selectPartitions returns want (all when want is empty) after checking
// that the topic has each of them.
func selectPartitions(topic string, all, want []int32) ([]int32, error) {
	if len(want) == 0 {
		return all, nil
	}
	has := make(map[int32]bool, len(all))
	for _, p := range all {
		has[p] = true
	}
	var missing []string
	for _, p := range want {
		if !has[p] {
			missing = append(missing, fmt.Sprint(p))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: topic %s has no partition %s (it has %s)", errNoPartition, topic, strings.Join(missing, ", "), describeIDs(all))
	}
	return want, nil
}

// describeIDs says which partitions a topic has: "partitions 0-3", or a
// list when they are not contiguous.
func describeIDs(ids []int32) string {
	if len(ids) == 0 {
		return "no partitions"
	}
	contiguous := true
	for i, p := range ids {
		if p != ids[0]+int32(i) {
			contiguous = false
		}
	}
	if contiguous {
		if len(ids) == 1 {
			return fmt.Sprintf("partition %d", ids[0])
		}
		return fmt.Sprintf("partitions %d-%d", ids[0], ids[len(ids)-1])
	}
	s := make([]string, len(ids))
	for i, p := range ids {
		s[i] = fmt.Sprint(p)
	}
	return "partitions " + strings.Join(s, ", ")
}

// offsetRange returns the partition's oldest offset and its high-water
// mark (the offset of the next message produced).
func (e *env) offsetRange(topic string, partition int32) (earliest, latest int64, err error) {
	if earliest, err = e.client.GetOffset(topic, partition, sarama.OffsetOldest); err != nil {
		return 0, 0, fmt.Errorf("earliest offset of %s/%d: %w", topic, partition, err)
	}
	if latest, err = e.client.GetOffset(topic, partition, sarama.OffsetNewest); err != nil {
		return 0, 0, fmt.Errorf("high-water mark of %s/%d: %w", topic, partition, err)
	}
	return earliest, latest, nil
}
