package compat_test

import (
	"testing"

	"github.com/go-zookeeper/zk"
)

// Every Watch* returns a channel of zk.Event, and the event is read as
// kazoo-go's callers read it: its Type against zk's constants, its Path.
func TestIntegrationWatchesDeliverZKEvents(t *testing.T) {
	c := newCluster(t)
	kz := c.connect()
	c.write("/brokers/topics/orders", `{"version":1,"partitions":{"0":[0]}}`)

	// Kazoo.WatchTopics: a new topic.
	topics, topicsChanged, err := kz.WatchTopics()
	if err != nil || len(topics) != 1 || topics[0].Name != "orders" {
		t.Fatalf("WatchTopics = %v, %v", topics, err)
	}
	// Topic.Watch and Topic.WatchPartitions: the assignment changes.
	topic := kz.Topic("orders")
	var topicChanged <-chan zk.Event
	if topicChanged, err = topic.Watch(); err != nil {
		t.Fatal(err)
	}
	parts, partsChanged, err := topic.WatchPartitions()
	if err != nil || len(parts) != 1 {
		t.Fatalf("WatchPartitions = %v, %v", parts, err)
	}
	c.write("/brokers/topics/payments", `{"version":1,"partitions":{"0":[0]}}`)
	c.write("/brokers/topics/orders", `{"version":1,"partitions":{"0":[0],"1":[0]}}`)
	for what, ev := range map[string]zk.Event{
		"WatchTopics":     next(t, topicsChanged),
		"Topic.Watch":     next(t, topicChanged),
		"WatchPartitions": next(t, partsChanged),
	} {
		wantType := zk.EventNodeDataChanged
		wantPath := c.chroot + "/brokers/topics/orders"
		if what == "WatchTopics" {
			wantType, wantPath = zk.EventNodeChildrenChanged, c.chroot+"/brokers/topics"
		}
		if ev.Type != wantType || ev.Path != wantPath {
			t.Errorf("%s: event %v at %s; want %v at %s", what, ev.Type, ev.Path, wantType, wantPath)
		}
	}

	// Consumergroup.WatchInstances: an instance joins.
	group := kz.Consumergroup("compat")
	instances, instancesChanged, err := group.WatchInstances()
	if err != nil || len(instances) != 0 {
		t.Fatalf("WatchInstances = %v, %v", instances, err)
	}
	inst := group.NewInstance()
	if err := inst.Register([]string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, instancesChanged); ev.Type != zk.EventNodeChildrenChanged {
		t.Errorf("WatchInstances: event %v", ev.Type)
	}

	// ConsumergroupInstance.WatchRegistration: the subscription changes.
	_, regChanged, err := inst.WatchRegistration()
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.UpdateRegistration([]string{"orders", "payments"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, regChanged); ev.Type != zk.EventNodeDataChanged {
		t.Errorf("WatchRegistration: event %v", ev.Type)
	}

	// Consumergroup.WatchPartitionOwner: unowned gives nil, nil, nil; an
	// owned partition's release fires EventNodeDeleted.
	owner, ownerChanged, err := group.WatchPartitionOwner("orders", 0)
	if owner != nil || ownerChanged != nil || err != nil {
		t.Fatalf("WatchPartitionOwner of an unowned partition = %v, %v, %v", owner, ownerChanged, err)
	}
	if err := inst.ClaimPartition("orders", 0); err != nil {
		t.Fatal(err)
	}
	if owner, ownerChanged, err = group.WatchPartitionOwner("orders", 0); err != nil || owner == nil || owner.ID != inst.ID {
		t.Fatalf("WatchPartitionOwner = %v, %v", owner, err)
	}
	if err := inst.ReleasePartition("orders", 0); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ownerChanged); ev.Type != zk.EventNodeDeleted {
		t.Errorf("WatchPartitionOwner: event %v", ev.Type)
	}
	if err := inst.Deregister(); err != nil {
		t.Fatal(err)
	}
}
