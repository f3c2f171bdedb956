package kazoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Errors about partition assignments. The names are kazoo-go's. Errors
// returned by this package wrap them (use errors.Is); an assignment read
// from ZooKeeper that breaks one of these rules also wraps ErrMalformed.
var (
	ErrInvalidPartitionCount    = errors.New("number of partitions must be larger than 0")
	ErrInvalidReplicationFactor = errors.New("replication factor must be between 1 and the number of brokers")
	ErrInvalidReplicaCount      = errors.New("all partitions must have the same number of replicas")
	ErrReplicaBrokerOverlap     = errors.New("all replicas of a partition must be on separate brokers")
	ErrInvalidBroker            = errors.New("replica assigned to an invalid broker")
	ErrMissingPartitionID       = errors.New("partition ids must be sequential starting from 0")
	ErrDuplicatePartitionID     = errors.New("each partition must have a unique id")
)

// Topic is a handle on one Kafka topic's metadata in ZooKeeper
// (/brokers/topics/<name> and /config/topics/<name>). Get it from
// Kazoo.Topic or Kazoo.Topics; it reads nothing until a method is called.
type Topic struct {
	Name string
	kz   *Kazoo
}

// TopicList is a list of topics, sortable by name (sort.Sort).
type TopicList []*Topic

// Partition is one partition of a topic and its assigned replicas (broker
// ids, preferred replica first), as read from the topic's assignment.
type Partition struct {
	topic    *Topic
	ID       int32
	Replicas []int32
}

// PartitionList is a list of partitions, sortable by topic name and then
// partition id (sort.Sort).
type PartitionList []*Partition

// PartitionState is the leader and in-sync replica set the controller keeps
// at /brokers/topics/<topic>/partitions/<id>/state.
type PartitionState struct {
	// Leader is the broker id of the partition's leader, or -1 if the
	// partition has no leader (every replica in the ISR is offline).
	Leader int32
	// LeaderEpoch counts leader changes of the partition.
	LeaderEpoch int32
	// ISR lists the broker ids of the in-sync replicas. It may be empty.
	ISR []int32
	// ControllerEpoch is the epoch of the controller that wrote the state.
	ControllerEpoch int32
}

// Topics returns every topic registered in the cluster, sorted by name.
func (kz *Kazoo) Topics() (TopicList, error) {
	names, err := kz.children(kz.topicsPath())
	if err != nil {
		return nil, err
	}
	return kz.topicList(names), nil
}

// WatchTopics is Topics plus a watch on the list: the channel receives one
// Event when a topic is created or deleted (or the watch is lost, see
// EventNotWatching) and is then closed. Call WatchTopics again to go on
// watching.
func (kz *Kazoo) WatchTopics() (TopicList, <-chan Event, error) {
	p := kz.topicsPath()
	names, _, w, err := kz.conn.ChildrenW(p)
	if err != nil {
		return nil, nil, znodeErr("children", p, err)
	}
	return kz.topicList(names), w, nil
}

func (kz *Kazoo) topicList(names []string) TopicList {
	slices.Sort(names)
	result := make(TopicList, 0, len(names))
	for _, name := range names {
		result = append(result, kz.Topic(name))
	}
	return result
}

// Topic returns a handle on the named topic. It does not check that the
// topic exists, nor the name: every method of the handle that reads
// ZooKeeper first checks the name with ValidateTopicName.
func (kz *Kazoo) Topic(name string) *Topic {
	return &Topic{Name: name, kz: kz}
}

// check reports a handle that cannot be used to build a path.
func (t *Topic) check() error {
	if t == nil || t.kz == nil {
		return errors.New("kazoo: Topic handle was not obtained from a Kazoo (use Kazoo.Topic)")
	}
	return ValidateTopicName(t.Name)
}

func (t *Topic) metadataPath() string { return t.kz.topicPath(t.Name) }

// Exists reports whether the topic is registered in the cluster.
func (t *Topic) Exists() (bool, error) {
	if err := t.check(); err != nil {
		return false, err
	}
	return t.kz.exists(t.metadataPath())
}

// Partitions returns the topic's partitions, ordered by id (so that
// Partitions()[i].ID == i), with their assigned replicas. A missing topic
// gives an error wrapping ErrNoNode; an assignment that cannot be parsed,
// including one whose partition ids are not exactly 0..n-1, one with a
// partition without replicas or with a negative or repeated broker id, gives
// an error wrapping ErrMalformed. Both name the znode.
func (t *Topic) Partitions() (PartitionList, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	p := t.metadataPath()
	data, _, err := t.kz.get(p)
	if err != nil {
		return nil, err
	}
	return t.parsePartitions(p, data)
}

// WatchPartitions is Partitions plus a watch on the topic's assignment: the
// channel receives one Event when the assignment changes (partitions added,
// replicas reassigned) or the topic is deleted, and is then closed. If the
// assignment is malformed, the error is returned together with the watch so
// that the caller can wait for it to be rewritten.
func (t *Topic) WatchPartitions() (PartitionList, <-chan Event, error) {
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	p := t.metadataPath()
	data, _, w, err := t.kz.conn.GetW(p)
	if err != nil {
		return nil, nil, znodeErr("get", p, err)
	}
	list, err := t.parsePartitions(p, data)
	return list, w, err
}

// Watch sets a watch on the topic's assignment znode without parsing it:
// the channel receives one Event when it changes or is deleted, and is
// then closed. A missing topic gives an error wrapping ErrNoNode.
func (t *Topic) Watch() (<-chan Event, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	p := t.metadataPath()
	_, _, w, err := t.kz.conn.GetW(p)
	if err != nil {
		return nil, znodeErr("get", p, err)
	}
	return w, nil
}

func (t *Topic) parsePartitions(path string, data []byte) (PartitionList, error) {
	replicas, err := parsePartitionMap(path, data)
	if err != nil {
		return nil, err
	}
	result := make(PartitionList, len(replicas))
	for id, r := range replicas {
		result[id] = t.Partition(int32(id), r)
	}
	return result, nil
}

// Partition returns a handle on partition id of the topic with the given
// replicas (preferred replica first). It reads nothing.
func (t *Topic) Partition(id int32, replicas []int32) *Partition {
	return &Partition{topic: t, ID: id, Replicas: replicas}
}

// Config returns the topic-level configuration overrides (for example
// "retention.ms"), stored at /config/topics/<name>. A topic without
// overrides gives an empty map. A missing config znode gives an error
// wrapping ErrNoNode; one that is not {"config": {string: string}} gives an
// error wrapping ErrMalformed.
func (t *Topic) Config() (map[string]string, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	p := t.kz.topicConfigPath(t.Name)
	data, _, err := t.kz.get(p)
	if err != nil {
		return nil, err
	}
	return parseTopicConfig(p, data)
}

// Topic returns the topic the partition belongs to.
func (p *Partition) Topic() *Topic { return p.topic }

// Key returns "<topic>/<id>", unique across the cluster.
func (p *Partition) Key() string {
	name := ""
	if p.topic != nil {
		name = p.topic.Name
	}
	return name + "/" + itoa(p.ID)
}

// PreferredReplica returns the broker id of the partition's preferred
// replica (its first assigned replica), or -1 if it has no replicas.
func (p *Partition) PreferredReplica() int32 {
	if len(p.Replicas) == 0 {
		return -1
	}
	return p.Replicas[0]
}

// State reads the partition's current leader and in-sync replicas. A
// partition whose state the controller has not written yet gives an error
// wrapping ErrNoNode; a state that cannot be parsed (no leader, a leader
// below -1, no ISR, a negative or repeated ISR entry) gives an error wrapping
// ErrMalformed. Both name the znode.
func (p *Partition) State() (*PartitionState, error) {
	if err := p.topic.check(); err != nil {
		return nil, err
	}
	kz := p.topic.kz
	node := kz.partitionStatePath(p.topic.Name, p.ID)
	data, _, err := kz.get(node)
	if err != nil {
		return nil, err
	}
	return parsePartitionState(node, data)
}

// WatchState is State plus a watch: the channel receives one Event when the
// state node next changes (a new leader or ISR) or is deleted, and is then
// closed. A parse error is returned with the watch, so the caller can wait
// for the node to be fixed.
func (p *Partition) WatchState() (*PartitionState, <-chan Event, error) {
	if err := p.topic.check(); err != nil {
		return nil, nil, err
	}
	kz := p.topic.kz
	node := kz.partitionStatePath(p.topic.Name, p.ID)
	data, _, w, err := kz.conn.GetW(node)
	if err != nil {
		return nil, nil, znodeErr("get", node, err)
	}
	state, err := parsePartitionState(node, data)
	return state, w, err
}

// Leader returns the broker id of the partition's current leader, or -1
// when it has none. Errors are State's.
func (p *Partition) Leader() (int32, error) {
	s, err := p.State()
	if err != nil {
		return -1, err
	}
	return s.Leader, nil
}

// ISR returns the broker ids of the partition's in-sync replicas. Errors
// are State's.
func (p *Partition) ISR() ([]int32, error) {
	s, err := p.State()
	if err != nil {
		return nil, err
	}
	return s.ISR, nil
}

// UnderReplicated reports whether fewer replicas are in sync than are
// assigned. Errors are State's.
func (p *Partition) UnderReplicated() (bool, error) {
	s, err := p.State()
	if err != nil {
		return false, err
	}
	return len(s.ISR) < len(p.Replicas), nil
}

// UsesPreferredReplica reports whether the partition is led by its
// preferred replica. (kazoo-go compared the first ISR entry instead, whose
// order says nothing about leadership; this compares the leader.) Errors
// are State's.
func (p *Partition) UsesPreferredReplica() (bool, error) {
	s, err := p.State()
	if err != nil {
		return false, err
	}
	return len(p.Replicas) > 0 && s.Leader >= 0 && s.Leader == p.Replicas[0], nil
}

// Find returns the topic of that name in the list, or nil.
func (tl TopicList) Find(name string) *Topic {
	for _, t := range tl {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// Len is part of sort.Interface.
func (tl TopicList) Len() int { return len(tl) }

// Less orders topics by name (sort.Interface).
func (tl TopicList) Less(i, j int) bool { return tl[i].Name < tl[j].Name }

// Swap is part of sort.Interface.
func (tl TopicList) Swap(i, j int) { tl[i], tl[j] = tl[j], tl[i] }

// Len is part of sort.Interface.
func (pl PartitionList) Len() int { return len(pl) }

// Less orders partitions by topic name, then id (sort.Interface).
func (pl PartitionList) Less(i, j int) bool {
	a, b := pl[i].topicName(), pl[j].topicName()
	return a < b || a == b && pl[i].ID < pl[j].ID
}

// Swap is part of sort.Interface.
func (pl PartitionList) Swap(i, j int) { pl[i], pl[j] = pl[j], pl[i] }

func (p *Partition) topicName() string {
	if p.topic == nil {
		return ""
	}
	return p.topic.Name
}

// ---- parsers: pure functions of (path, data); every error wraps ErrMalformed ----

// parsePartitionMap parses a topic's assignment,
// {"version":N,"partitions":{"0":[1,2],"1":[2,3]},...}, into the replicas
// of each partition indexed by partition id. Other fields (topic_id,
// adding_replicas, ...) are ignored.
func parsePartitionMap(path string, data []byte) ([][]int32, error) {
	var top struct {
		Partitions json.RawMessage `json:"partitions"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, malformed(path, "topic assignment is not a JSON object: %v", err)
	}
	raw := bytes.TrimSpace(top.Partitions)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, malformed(path, "%w: topic assignment has no partitions", ErrInvalidPartitionCount)
	}
	// Decode the object token by token: a map would silently keep only
	// the last of two equal keys.
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, malformed(path, `"partitions" is not a JSON object`)
	}
	byID := make(map[int32][]int32)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(path, `"partitions": %v`, err)
		}
		key, _ := tok.(string)
		id, err := strconv.ParseInt(key, 10, 32)
		if err != nil || strconv.FormatInt(id, 10) != key {
			return nil, malformed(path, "partition id %q is not a decimal 32-bit integer", key)
		}
		if id < 0 {
			return nil, malformed(path, "negative partition id %d", id)
		}
		var replicas []int32
		if err := dec.Decode(&replicas); err != nil {
			return nil, malformed(path, "replicas of partition %d: %v", id, err)
		}
		if _, dup := byID[int32(id)]; dup {
			return nil, malformed(path, "%w: partition %d appears twice", ErrDuplicatePartitionID, id)
		}
		if err := checkBrokerIDs(replicas); err != nil {
			return nil, malformed(path, "replicas of partition %d: %w", id, err)
		}
		byID[int32(id)] = replicas
	}
	if len(byID) == 0 {
		return nil, malformed(path, "%w: topic assignment has no partitions", ErrInvalidPartitionCount)
	}
	result := make([][]int32, len(byID))
	for id, replicas := range byID {
		if int(id) >= len(result) {
			missing := 0
			for byID[int32(missing)] != nil {
				missing++
			}
			return nil, malformed(path, "%w: %d partitions but no partition %d", ErrMissingPartitionID, len(byID), missing)
		}
		result[id] = replicas
	}
	return result, nil
}

// checkBrokerIDs checks a replica list: not empty, no negative or repeated
// broker id.
func checkBrokerIDs(ids []int32) error {
	if len(ids) == 0 {
		return fmt.Errorf("%w: no replicas", ErrInvalidReplicationFactor)
	}
	for i, id := range ids {
		if id < 0 {
			return fmt.Errorf("%w: negative broker id %d", ErrInvalidBroker, id)
		}
		if slices.Contains(ids[:i], id) {
			return fmt.Errorf("%w: broker %d listed twice", ErrReplicaBrokerOverlap, id)
		}
	}
	return nil
}

// parsePartitionState parses a partition's state,
// {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}.
func parsePartitionState(path string, data []byte) (*PartitionState, error) {
	var j struct {
		Leader          *int32   `json:"leader"`
		LeaderEpoch     int32    `json:"leader_epoch"`
		ISR             *[]int32 `json:"isr"`
		ControllerEpoch int32    `json:"controller_epoch"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, malformed(path, "partition state is not valid JSON: %v", err)
	}
	switch {
	case j.Leader == nil:
		return nil, malformed(path, `partition state has no "leader"`)
	case *j.Leader < -1:
		return nil, malformed(path, "partition state has leader %d; want a broker id or -1", *j.Leader)
	case j.ISR == nil:
		return nil, malformed(path, `partition state has no "isr"`)
	}
	isr := *j.ISR
	for i, id := range isr {
		if id < 0 {
			return nil, malformed(path, "partition state has negative broker id %d in its ISR", id)
		}
		if slices.Contains(isr[:i], id) {
			return nil, malformed(path, "partition state lists broker %d twice in its ISR", id)
		}
	}
	if isr == nil {
		isr = []int32{}
	}
	return &PartitionState{Leader: *j.Leader, LeaderEpoch: j.LeaderEpoch, ISR: isr, ControllerEpoch: j.ControllerEpoch}, nil
}

// parseTopicConfig parses a topic's configuration overrides,
// {"version":1,"config":{"retention.ms":"604800000"}}. The result is never
// nil.
func parseTopicConfig(path string, data []byte) (map[string]string, error) {
	var j struct {
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, malformed(path, `topic config is not {"config": {string: string}}: %v`, err)
	}
	if j.Config == nil {
		j.Config = map[string]string{}
	}
	return j.Config, nil
}
