package consumergroup

import (
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
)

// A partition without a stored offset starts at Offsets.Initial, resolved
// and stored before anything is delivered from it: an owner that dies
// before its first commit must not let the next owner resolve
// Offsets.Initial again (with OffsetNewest, the messages in between would
// never be delivered). Here the offsets directory refuses writes (its ACL
// allows no create) until the test lifts that: nothing may be delivered
// until then, and the first delivery finds the start offset stored.
func TestIntegrationStartOffsetStoredBeforeFirstDelivery(t *testing.T) {
	f := newOrphanFixture(t, 1)
	conn, _, err := zk.Connect([]string{testenv.ZKAddr()}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := path.Join("/consumers", f.group, "offsets", f.topic)
	for _, p := range []string{"/consumers", path.Dir(path.Dir(dir)), path.Dir(dir)} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	if _, err := conn.Create(dir, nil, 0, zk.WorldACL(zk.PermRead|zk.PermDelete|zk.PermAdmin)); err != nil {
		t.Fatal(err)
	}

	cfg := fenceTestConfig()
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	go func() {
		for e := range cg.Errors() {
			t.Logf("error (the refused start commit is expected): %v", e)
		}
	}()
	select {
	case m := <-cg.Messages():
		t.Fatalf("offset %d delivered while the start offset could not be stored", m.Offset)
	case <-time.After(3 * time.Second):
	}

	if _, err := conn.SetACL(dir, zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-cg.Messages():
		stored, err := f.kg.FetchOffset(f.topic, 0)
		if err != nil || stored != 0 {
			t.Errorf("first delivery (offset %d) with the stored offset at %d (%v), want 0 stored before it", m.Offset, stored, err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("nothing delivered once the start offset could be stored")
	}
}
