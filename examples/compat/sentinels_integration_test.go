package compat_test

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// Every kazoo-go error the library returns compares equal with ==, as
// kazoo-go's callers compare it, at each call that returned it there.
func TestIntegrationSentinelsCompareWithEqual(t *testing.T) {
	c := newCluster(t)
	kz := c.connect()
	other := c.connect() // a second program, with a session of its own

	group := kz.Consumergroup("compat")
	if err := group.Create(); err != nil {
		t.Fatal(err)
	}
	a := group.NewInstance()
	b := group.NewInstance()
	want := func(what string, err, sentinel error) {
		t.Helper()
		if err != sentinel {
			t.Errorf("%s = %v; want %v (==)", what, err, sentinel)
		}
	}

	// Instances.
	_, err := a.Registration()
	want("Registration before Register", err, kazoo.ErrInstanceNotRegistered)
	reg, ch, err := a.WatchRegistration()
	want("WatchRegistration before Register", err, kazoo.ErrInstanceNotRegistered)
	if reg != nil || ch != nil {
		t.Errorf("WatchRegistration before Register returned %v, %v", reg, ch)
	}
	want("UpdateRegistration before Register", a.UpdateRegistration([]string{"t"}), kazoo.ErrInstanceNotRegistered)
	want("Deregister before Register", a.Deregister(), kazoo.ErrInstanceNotRegistered)
	if err := a.Register([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	want("Register twice", a.Register([]string{"t"}), kazoo.ErrInstanceAlreadyRegistered)
	want("RegisterWithSubscription twice", a.RegisterWithSubscription([]byte(`{}`)), kazoo.ErrInstanceAlreadyRegistered)
	want("Register of the same id by another program", other.Consumergroup("compat").Instance(a.ID).Register([]string{"t"}), kazoo.ErrInstanceAlreadyRegistered)
	want("Delete with a running instance", group.Delete(), kazoo.ErrRunningInstances)

	// Partitions.
	if err := a.ClaimPartition("t", 0); err != nil {
		t.Fatal(err)
	}
	if err := a.ClaimPartition("t", 0); err != nil {
		t.Errorf("claiming an owned partition again: %v", err)
	}
	want("ClaimPartition of another's partition", b.ClaimPartition("t", 0), kazoo.ErrPartitionClaimedByOther)
	want("ReleasePartition of another's partition", b.ReleasePartition("t", 0), kazoo.ErrPartitionNotClaimed)
	want("ReleasePartition of an unclaimed partition", a.ReleasePartition("t", 1), kazoo.ErrPartitionNotClaimed)
	if err := a.ReleasePartition("t", 0); err != nil {
		t.Fatal(err)
	}
	want("ReleasePartition twice", a.ReleasePartition("t", 0), kazoo.ErrPartitionNotClaimed)

	if err := a.Deregister(); err != nil {
		t.Fatal(err)
	}
	want("Deregister twice", a.Deregister(), kazoo.ErrInstanceNotRegistered)
	if err := group.Delete(); err != nil {
		t.Errorf("Delete without instances: %v", err)
	}

	// Topics. The chroot has one (fake) broker and no controller.
	want("CreateTopic with 0 partitions", kz.CreateTopic("orders", 0, 1, nil), kazoo.ErrInvalidPartitionCount)
	want("CreateTopic with replication 0", kz.CreateTopic("orders", 1, 0, nil), kazoo.ErrInvalidReplicationFactor)
	want("CreateTopic with more replicas than brokers", kz.CreateTopic("orders", 1, 2, nil), kazoo.ErrInvalidReplicationFactor)
	if err := kz.CreateTopic("orders", 2, 1, map[string]string{"retention.ms": "60000"}); err != nil {
		t.Fatal(err)
	}
	want("CreateTopic twice", kz.CreateTopic("orders", 2, 1, nil), kazoo.ErrTopicExists)
	if err := kz.DeleteTopic("orders"); err != nil {
		t.Fatal(err)
	}
	want("DeleteTopic twice", kz.DeleteTopic("orders"), kazoo.ErrTopicMarkedForDelete)
	want("CreateTopic while marked for deletion", kz.CreateTopic("orders", 2, 1, nil), kazoo.ErrTopicExists)
	if err := kz.CreateTopic("payments", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	// No controller acts on the mark here, so the wait runs out.
	want("DeleteTopicSync without a controller", kz.DeleteTopicSync("payments", 200*time.Millisecond), kazoo.ErrDeletionTimedOut)
}
