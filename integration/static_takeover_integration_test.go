package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// A static member whose registration another session took over (its node
// deleted and its id registered again before its loop read the group: the
// other instance won the race to register) is fenced: it reports
// ErrFencedInstanceID and consumes nothing more, rather than going on
// under an id whose registration is another live instance's.
func TestIntegrationStaticRegistrationTakenOver(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 2)
	group := testenv.UniqueName("static-taken")
	kg := zkClient(t).Consumergroup(group)
	a := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	fenced := make(chan error, 1)
	done := readGroup(a, 0, newLedger(), 0, func(err error) {
		t.Logf("A: error: %v", err)
		if errors.Is(err, consumergroup.ErrFencedInstanceID) {
			select {
			case fenced <- err:
			default:
			}
		}
	})
	waitOwners(t, kg, topic, 2, func(int32) int { return 0 })

	other, _, err := zk.Connect(testenv.ZKServers(), 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	node := "/consumers/" + group + "/ids/s0"
	reg, _, err := other.Get(node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Multi(
		&zk.DeleteRequest{Path: node, Version: -1},
		&zk.CreateRequest{Path: node, Data: reg, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral},
	); err != nil {
		t.Fatal(err)
	}

	select {
	case <-fenced:
	case <-time.After(10 * time.Second):
		t.Error("A went on under s0 although another session registered it")
	}
	closeGroup(t, a)
	<-done
}
