package kazoo

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationWatchState: WatchState returns the leader and fires when
// the controller writes a new state; a malformed state comes back with the
// error and a live watch.
func TestIntegrationWatchState(t *testing.T) {
	testenv.Integration(t)
	root, err := NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	chroot := "/" + testenv.UniqueName("state")
	defer func() { _ = root.deleteRecursive(chroot) }()
	statePath := chroot + "/brokers/topics/t/partitions/0/state"
	if err := root.create(chroot+"/brokers/topics/t", []byte(`{"version":1,"partitions":{"0":[1,2]}}`), false); err != nil {
		t.Fatal(err)
	}
	if err := root.create(statePath, []byte(`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}`), false); err != nil {
		t.Fatal(err)
	}

	conf := NewConfig()
	conf.Chroot = chroot
	kz, err := NewKazoo([]string{testenv.ZKAddr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	parts, err := kz.Topic("t").Partitions()
	if err != nil || len(parts) != 1 {
		t.Fatalf("partitions: %v, %v", parts, err)
	}
	state, ch, err := parts[0].WatchState()
	if err != nil || state.Leader != 1 {
		t.Fatalf("WatchState = %+v, %v", state, err)
	}
	if err := root.createOrUpdate(statePath, []byte(`{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":1,"isr":[2]}`), false); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != EventNodeDataChanged {
			t.Errorf("event %v, want a data change", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the state watch did not fire")
	}
	if leader, err := parts[0].Leader(); err != nil || leader != 2 {
		t.Errorf("Leader() = %d, %v; want 2", leader, err)
	}

	if err := root.createOrUpdate(statePath, []byte(`{"leader":`), false); err != nil {
		t.Fatal(err)
	}
	_, ch, err = parts[0].WatchState()
	if !errors.Is(err, ErrMalformed) || ch == nil {
		t.Fatalf("malformed state: %v (watch %v); want ErrMalformed with a watch", err, ch)
	}
	if err := root.createOrUpdate(statePath, []byte(`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":2,"isr":[1]}`), false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch returned with the parse error did not fire")
	}
}
