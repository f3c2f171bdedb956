package coord

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// barrierZooKeeper is fakeZooKeeper whose registration reads each wait
// until every registered instance's read has started, or until a bound
// passes: read one at a time, they would find the barrier never full.
type barrierZooKeeper struct {
	*fakeZooKeeper
	mu      sync.Mutex
	waiting int
	full    chan struct{}
	timeout bool
}

func (z *barrierZooKeeper) WatchRegistration(id string) (*kazoo.Registration, <-chan kazoo.Event, error) {
	z.mu.Lock()
	z.waiting++
	if z.waiting == len(z.regs) {
		close(z.full)
	}
	z.mu.Unlock()
	select {
	case <-z.full:
	case <-time.After(5 * time.Second):
		z.mu.Lock()
		z.timeout = true
		z.mu.Unlock()
		return nil, nil, errors.New("the other registrations were not read meanwhile")
	}
	return z.fakeZooKeeper.WatchRegistration(id)
}

// The registrations of a view are read concurrently, and the members come
// back in the listing's order with their subscriptions.
func TestReadMembersReadsTheRegistrationsConcurrently(t *testing.T) {
	regs := map[string]*kazoo.Registration{}
	for _, id := range []string{"a", "b", "c", "d"} {
		regs[id] = &kazoo.Registration{Subscription: map[string]int{"t": 1}}
	}
	zk := &barrierZooKeeper{fakeZooKeeper: &fakeZooKeeper{self: "a", regs: regs}, full: make(chan struct{})}
	l := testLoop(t, "a", &fakeWorkers{})
	l.d.ZooKeeper = zk
	members, err := l.readMembers(newLoopWatches(), []string{"a", "b", "c", "d"}, map[string]bool{})
	if err != nil || zk.timeout {
		t.Fatalf("readMembers: %v (registrations read one at a time: %v)", err, zk.timeout)
	}
	var ids []string
	for _, m := range members {
		if !m.Sub.Includes("t") || m.Sub.Includes("u") {
			t.Errorf("member %s: subscription %+v, want topic t", m.ID, m.Sub)
		}
		ids = append(ids, m.ID)
	}
	if len(ids) != 4 || ids[0] != "a" || ids[1] != "b" || ids[2] != "c" || ids[3] != "d" {
		t.Fatalf("members %v, want [a b c d]", ids)
	}
}
