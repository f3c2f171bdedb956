package compat_test

import (
	"sort"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

// The exported API of kazoo-go, name by name, with the types kazoo-go gave
// them. Each line is an assignment that compiles only if the name exists
// here with exactly that type (pointers to fields pin the field's type;
// method expressions pin the receiver, the parameters and the results).
var (
	// Package functions.
	_ func([]string, *kazoo.Config) (*kazoo.Kazoo, error) = kazoo.NewKazoo
	_ func(string, *kazoo.Config) (*kazoo.Kazoo, error)   = kazoo.NewKazooFromConnectionString
	_ func() *kazoo.Config                                = kazoo.NewConfig
	_ func(string) ([]string, string)                     = kazoo.ParseConnectionString
	_ func([]string) string                               = kazoo.BuildConnectionString
	_ func([]string, string) string                       = kazoo.BuildConnectionStringWithChroot

	// Kazoo.
	_ func(*kazoo.Kazoo) ([]string, error)                                                             = (*kazoo.Kazoo).BrokerList
	_ func(*kazoo.Kazoo) (map[int32]string, error)                                                     = (*kazoo.Kazoo).Brokers
	_ func(*kazoo.Kazoo) error                                                                         = (*kazoo.Kazoo).Close
	_ func(*kazoo.Kazoo, string) *kazoo.Consumergroup                                                  = (*kazoo.Kazoo).Consumergroup
	_ func(*kazoo.Kazoo) (kazoo.ConsumergroupList, error)                                              = (*kazoo.Kazoo).Consumergroups
	_ func(*kazoo.Kazoo) (int32, error)                                                                = (*kazoo.Kazoo).Controller
	_ func(*kazoo.Kazoo, string, int, int, map[string]string) error                                    = (*kazoo.Kazoo).CreateTopic
	_ func(*kazoo.Kazoo, string) error                                                                 = (*kazoo.Kazoo).DeleteTopic
	_ func(*kazoo.Kazoo, string, time.Duration) error                                                  = (*kazoo.Kazoo).DeleteTopicSync
	_ func(*kazoo.Kazoo, string) *kazoo.Topic                                                          = (*kazoo.Kazoo).Topic
	_ func(*kazoo.Kazoo) (kazoo.TopicList, error)                                                      = (*kazoo.Kazoo).Topics
	_ func(*kazoo.Kazoo) (kazoo.TopicList, <-chan zk.Event, error)                                     = (*kazoo.Kazoo).WatchTopics
	_ func(*kazoo.Consumergroup, string, int32, int64) error                                           = (*kazoo.Consumergroup).CommitOffset
	_ func(*kazoo.Consumergroup) error                                                                 = (*kazoo.Consumergroup).Create
	_ func(*kazoo.Consumergroup) error                                                                 = (*kazoo.Consumergroup).Delete
	_ func(*kazoo.Consumergroup) (bool, error)                                                         = (*kazoo.Consumergroup).Exists
	_ func(*kazoo.Consumergroup) (map[string]map[int32]int64, error)                                   = (*kazoo.Consumergroup).FetchAllOffsets
	_ func(*kazoo.Consumergroup, string, int32) (int64, error)                                         = (*kazoo.Consumergroup).FetchOffset
	_ func(*kazoo.Consumergroup, string) *kazoo.ConsumergroupInstance                                  = (*kazoo.Consumergroup).Instance
	_ func(*kazoo.Consumergroup) (kazoo.ConsumergroupInstanceList, error)                              = (*kazoo.Consumergroup).Instances
	_ func(*kazoo.Consumergroup) *kazoo.ConsumergroupInstance                                          = (*kazoo.Consumergroup).NewInstance
	_ func(*kazoo.Consumergroup, string, int32) (*kazoo.ConsumergroupInstance, error)                  = (*kazoo.Consumergroup).PartitionOwner
	_ func(*kazoo.Consumergroup) error                                                                 = (*kazoo.Consumergroup).ResetOffsets
	_ func(*kazoo.Consumergroup) (kazoo.TopicList, error)                                              = (*kazoo.Consumergroup).Topics
	_ func(*kazoo.Consumergroup) (kazoo.ConsumergroupInstanceList, <-chan zk.Event, error)             = (*kazoo.Consumergroup).WatchInstances
	_ func(*kazoo.Consumergroup, string, int32) (*kazoo.ConsumergroupInstance, <-chan zk.Event, error) = (*kazoo.Consumergroup).WatchPartitionOwner

	// ConsumergroupInstance.
	_ func(*kazoo.ConsumergroupInstance, string, int32) error                          = (*kazoo.ConsumergroupInstance).ClaimPartition
	_ func(*kazoo.ConsumergroupInstance) error                                         = (*kazoo.ConsumergroupInstance).Deregister
	_ func(*kazoo.ConsumergroupInstance, []string) error                               = (*kazoo.ConsumergroupInstance).Register
	_ func(*kazoo.ConsumergroupInstance, []byte) error                                 = (*kazoo.ConsumergroupInstance).RegisterWithSubscription
	_ func(*kazoo.ConsumergroupInstance) (bool, error)                                 = (*kazoo.ConsumergroupInstance).Registered
	_ func(*kazoo.ConsumergroupInstance) (*kazoo.Registration, error)                  = (*kazoo.ConsumergroupInstance).Registration
	_ func(*kazoo.ConsumergroupInstance, string, int32) error                          = (*kazoo.ConsumergroupInstance).ReleasePartition
	_ func(*kazoo.ConsumergroupInstance, []string) error                               = (*kazoo.ConsumergroupInstance).UpdateRegistration
	_ func(*kazoo.ConsumergroupInstance) (*kazoo.Registration, <-chan zk.Event, error) = (*kazoo.ConsumergroupInstance).WatchRegistration

	// Topic and Partition.
	_ func(*kazoo.Topic) (map[string]string, error)                    = (*kazoo.Topic).Config
	_ func(*kazoo.Topic) (bool, error)                                 = (*kazoo.Topic).Exists
	_ func(*kazoo.Topic, int32, []int32) *kazoo.Partition              = (*kazoo.Topic).Partition
	_ func(*kazoo.Topic) (kazoo.PartitionList, error)                  = (*kazoo.Topic).Partitions
	_ func(*kazoo.Topic) (<-chan zk.Event, error)                      = (*kazoo.Topic).Watch
	_ func(*kazoo.Topic) (kazoo.PartitionList, <-chan zk.Event, error) = (*kazoo.Topic).WatchPartitions
	_ func(*kazoo.Partition) ([]int32, error)                          = (*kazoo.Partition).ISR
	_ func(*kazoo.Partition) string                                    = (*kazoo.Partition).Key
	_ func(*kazoo.Partition) (int32, error)                            = (*kazoo.Partition).Leader
	_ func(*kazoo.Partition) int32                                     = (*kazoo.Partition).PreferredReplica
	_ func(*kazoo.Partition) *kazoo.Topic                              = (*kazoo.Partition).Topic
	_ func(*kazoo.Partition) (bool, error)                             = (*kazoo.Partition).UnderReplicated
	_ func(*kazoo.Partition) (bool, error)                             = (*kazoo.Partition).UsesPreferredReplica

	// Lists: sortable, with Find.
	_ sort.Interface                                                             = kazoo.ConsumergroupList(nil)
	_ sort.Interface                                                             = kazoo.ConsumergroupInstanceList(nil)
	_ sort.Interface                                                             = kazoo.TopicList(nil)
	_ sort.Interface                                                             = kazoo.PartitionList(nil)
	_ func(kazoo.ConsumergroupList, string) *kazoo.Consumergroup                 = kazoo.ConsumergroupList.Find
	_ func(kazoo.ConsumergroupInstanceList, string) *kazoo.ConsumergroupInstance = kazoo.ConsumergroupInstanceList.Find
	_ func(kazoo.TopicList, string) *kazoo.Topic                                 = kazoo.TopicList.Find
	_ kazoo.ConsumergroupList                                                    = []*kazoo.Consumergroup{}
	_ kazoo.ConsumergroupInstanceList                                            = []*kazoo.ConsumergroupInstance{}
	_ kazoo.TopicList                                                            = []*kazoo.Topic{}
	_ kazoo.PartitionList                                                        = []*kazoo.Partition{}

	// Registration constants.
	_ kazoo.RegPattern = kazoo.RegPatternStatic
	_ kazoo.RegPattern = kazoo.RegPatternWhiteList
	_ kazoo.RegPattern = kazoo.RegPatternBlackList
	_ kazoo.RegVersion = kazoo.RegDefaultVersion
	_ string           = string(kazoo.RegPattern(""))
	_ int              = int(kazoo.RegVersion(0))

	// kazoo-go's errors.
	_ = []error{
		kazoo.FailedToClaimPartition,
		kazoo.ErrRunningInstances, kazoo.ErrInstanceAlreadyRegistered, kazoo.ErrInstanceNotRegistered,
		kazoo.ErrPartitionClaimedByOther, kazoo.ErrPartitionNotClaimed,
		kazoo.ErrTopicExists, kazoo.ErrTopicMarkedForDelete, kazoo.ErrDeletionTimedOut,
		kazoo.ErrInvalidPartitionCount, kazoo.ErrInvalidReplicationFactor, kazoo.ErrInvalidReplicaCount,
		kazoo.ErrReplicaBrokerOverlap, kazoo.ErrInvalidBroker, kazoo.ErrMissingPartitionID, kazoo.ErrDuplicatePartitionID,
	}
)

// Struct fields, pinned by the type of a pointer to them.
func kazooFields(c *kazoo.Config, cg *kazoo.Consumergroup, cgi *kazoo.ConsumergroupInstance,
	r *kazoo.Registration, t *kazoo.Topic, p *kazoo.Partition) {
	var (
		_ *string           = &c.Chroot
		_ *time.Duration    = &c.Timeout
		_ *zk.Logger        = &c.Logger
		_ *string           = &cg.Name
		_ *string           = &cgi.ID
		_ *kazoo.RegPattern = &r.Pattern
		_ *map[string]int   = &r.Subscription
		_ *int64            = &r.Timestamp
		_ *kazoo.RegVersion = &r.Version
		_ *string           = &t.Name
		_ *int32            = &p.ID
		_ *[]int32          = &p.Replicas
	)
	// The composite literals kazoo-go's users write.
	_ = kazoo.Config{Chroot: "/kafka", Timeout: time.Second, Logger: zk.DefaultLogger}
	_ = kazoo.Registration{Pattern: kazoo.RegPatternStatic, Subscription: map[string]int{"t": 1}, Timestamp: time.Now().Unix(), Version: kazoo.RegDefaultVersion}
}

// The exported API of wvanbergen/kafka/consumergroup, with sarama's import
// path changed.
var (
	_ func() *consumergroup.Config                                                                       = consumergroup.NewConfig
	_ func(*consumergroup.Config) error                                                                  = (*consumergroup.Config).Validate
	_ func(string, []string, []string, *consumergroup.Config) (*consumergroup.ConsumerGroup, error)      = consumergroup.JoinConsumerGroup
	_ func(*consumergroup.ConsumerGroup) error                                                           = (*consumergroup.ConsumerGroup).Close
	_ func(*consumergroup.ConsumerGroup) bool                                                            = (*consumergroup.ConsumerGroup).Closed
	_ func(*consumergroup.ConsumerGroup, *sarama.ConsumerMessage) error                                  = (*consumergroup.ConsumerGroup).CommitUpto
	_ func(*consumergroup.ConsumerGroup) <-chan error                                                    = (*consumergroup.ConsumerGroup).Errors
	_ func(*consumergroup.ConsumerGroup) error                                                           = (*consumergroup.ConsumerGroup).FlushOffsets
	_ func(*consumergroup.ConsumerGroup) (bool, error)                                                   = (*consumergroup.ConsumerGroup).InstanceRegistered
	_ func(*consumergroup.ConsumerGroup, string, ...interface{})                                         = (*consumergroup.ConsumerGroup).Logf
	_ func(*consumergroup.ConsumerGroup) <-chan *sarama.ConsumerMessage                                  = (*consumergroup.ConsumerGroup).Messages
	_ func() *consumergroup.OffsetManagerConfig                                                          = consumergroup.NewOffsetManagerConfig
	_ func(*consumergroup.ConsumerGroup, *consumergroup.OffsetManagerConfig) consumergroup.OffsetManager = consumergroup.NewZookeeperOffsetManager
	_ consumergroup.OffsetManager                                                                        = upstreamOffsetManager{}
	_                                                                                                    = []error{consumergroup.AlreadyClosing, consumergroup.UncleanClose}
)

// upstreamOffsetManager has exactly the methods of upstream's
// OffsetManager: a user's own implementation must still satisfy the
// interface.
type upstreamOffsetManager struct{}

func (upstreamOffsetManager) InitializePartition(string, int32) (int64, error)            { return 0, nil }
func (upstreamOffsetManager) MarkAsProcessed(string, int32, int64) bool                   { return false }
func (upstreamOffsetManager) Flush() error                                                { return nil }
func (upstreamOffsetManager) FinalizePartition(string, int32, int64, time.Duration) error { return nil }
func (upstreamOffsetManager) Close() error                                                { return nil }

func consumergroupFields(c *consumergroup.Config, om *consumergroup.OffsetManagerConfig, m consumergroup.OffsetManager) {
	var (
		_ **sarama.Config                                 = &c.Config
		_ **kazoo.Config                                  = &c.Zookeeper
		_ *int64                                          = &c.Offsets.Initial
		_ *time.Duration                                  = &c.Offsets.ProcessingTimeout
		_ *time.Duration                                  = &c.Offsets.CommitInterval
		_ *bool                                           = &c.Offsets.ResetOffsets
		_ *time.Duration                                  = &om.CommitInterval
		_ *bool                                           = &om.VerboseLogging
		_ func(string, int32) (int64, error)              = m.InitializePartition
		_ func(string, int32, int64) bool                 = m.MarkAsProcessed
		_ func() error                                    = m.Flush
		_ func(string, int32, int64, time.Duration) error = m.FinalizePartition
		_ func() error                                    = m.Close
	)
	// Upstream's setup code.
	c.ClientID = "group" // a field of the embedded sarama.Config
	c.Zookeeper.Timeout = time.Second
}

// Keep the field checks referenced; they are compile-time only.
var _, _ = kazooFields, consumergroupFields

// The event types are the ZooKeeper client's: kazoo's names and zk's names
// are interchangeable, in comparisons and in switch statements.
func TestEventTypesAreZKs(t *testing.T) {
	for _, c := range []struct {
		ours, theirs zk.EventType
	}{
		{kazoo.EventNodeCreated, zk.EventNodeCreated},
		{kazoo.EventNodeDeleted, zk.EventNodeDeleted},
		{kazoo.EventNodeDataChanged, zk.EventNodeDataChanged},
		{kazoo.EventNodeChildrenChanged, zk.EventNodeChildrenChanged},
		{kazoo.EventNotWatching, zk.EventNotWatching},
	} {
		if c.ours != c.theirs {
			t.Errorf("kazoo's %v is not zk's %v", c.ours, c.theirs)
		}
	}
	var ev kazoo.Event = zk.Event{Type: zk.EventNodeDeleted, Path: "/x"}
	var back zk.Event = ev
	if back.Type != kazoo.EventNodeDeleted {
		t.Errorf("event %+v did not survive the round trip", back)
	}
}

// The ZooKeeper errors kazoo re-exports are zk's own values.
func TestZKErrorsAreZKs(t *testing.T) {
	if kazoo.ErrNoNode != zk.ErrNoNode || kazoo.ErrNodeExists != zk.ErrNodeExists || kazoo.ErrBadVersion != zk.ErrBadVersion {
		t.Fatal("kazoo's ZooKeeper errors are not zk's values")
	}
}

// kazoo-go's errors are distinct values, so == tells them apart.
func TestSentinelsDistinct(t *testing.T) {
	all := []error{
		kazoo.FailedToClaimPartition,
		kazoo.ErrRunningInstances, kazoo.ErrInstanceAlreadyRegistered, kazoo.ErrInstanceNotRegistered,
		kazoo.ErrPartitionClaimedByOther, kazoo.ErrPartitionNotClaimed,
		kazoo.ErrTopicExists, kazoo.ErrTopicMarkedForDelete, kazoo.ErrDeletionTimedOut,
		kazoo.ErrInvalidPartitionCount, kazoo.ErrInvalidReplicationFactor, kazoo.ErrInvalidReplicaCount,
		kazoo.ErrReplicaBrokerOverlap, kazoo.ErrInvalidBroker, kazoo.ErrMissingPartitionID, kazoo.ErrDuplicatePartitionID,
		consumergroup.AlreadyClosing, consumergroup.UncleanClose,
	}
	seen := make(map[error]int)
	for i, err := range all {
		if err == nil || err.Error() == "" {
			t.Errorf("error %d is nil or has no message", i)
		}
		if j, dup := seen[err]; dup {
			t.Errorf("errors %d and %d are the same value", j, i)
		}
		seen[err] = i
	}
}

// Connection strings as kazoo-go parses and builds them.
func TestConnectionStrings(t *testing.T) {
	for _, c := range []struct {
		in     string
		nodes  []string
		chroot string
	}{
		{"zk1:2181", []string{"zk1:2181"}, ""},
		{"zk1:2181,zk2:2181,zk3:2181", []string{"zk1:2181", "zk2:2181", "zk3:2181"}, ""},
		{"zk1:2181,zk2:2181/kafka", []string{"zk1:2181", "zk2:2181"}, "/kafka"},
		{"zk1:2181/kafka/cluster1", []string{"zk1:2181"}, "/kafka/cluster1"},
	} {
		nodes, chroot := kazoo.ParseConnectionString(c.in)
		if !equalStrings(nodes, c.nodes) || chroot != c.chroot {
			t.Errorf("ParseConnectionString(%q) = %q, %q; want %q, %q", c.in, nodes, chroot, c.nodes, c.chroot)
		}
		if got := kazoo.BuildConnectionStringWithChroot(nodes, chroot); got != c.in {
			t.Errorf("BuildConnectionStringWithChroot(%q, %q) = %q, want %q", nodes, chroot, got, c.in)
		}
	}
	if got := kazoo.BuildConnectionString([]string{"a:1", "b:2"}); got != "a:1,b:2" {
		t.Errorf("BuildConnectionString = %q", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
