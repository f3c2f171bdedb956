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

// A registration whose watch has not fired is not read again: a view after
// a join reads the joiner's registration only. One whose watch fired is
// read again, and its change seen.
func TestReadMembersReadsOnlyRegistrationsThatChanged(t *testing.T) {
	zk := newWatchingZooKeeper()
	defer zk.expire() // ends the watches' goroutines
	for _, id := range []string{"a", "b", "c"} {
		zk.set(id, &kazoo.Registration{Subscription: map[string]int{"t": 1}})
	}
	l := testLoop(t, "a", &fakeWorkers{})
	l.d.ZooKeeper = zk
	ws := newLoopWatches()
	read := func(step string, ids ...string) (onU []string) {
		t.Helper()
		members, err := l.readMembers(ws, ids, map[string]bool{})
		if err != nil || len(members) != len(ids) {
			t.Fatalf("%s: readMembers: %v, %d members; want %d", step, err, len(members), len(ids))
		}
		for _, m := range members {
			if m.Sub.Includes("u") {
				onU = append(onU, m.ID)
			}
		}
		return onU
	}
	read("first view", "a", "b", "c")
	if got := zk.takeRegReads(); len(got) != 3 {
		t.Fatalf("first view read %v, want every registration once", got)
	}

	zk.set("d", &kazoo.Registration{Subscription: map[string]int{"t": 1}})
	read("after d joined", "a", "b", "c", "d")
	if got := zk.takeRegReads(); len(got) != 1 || got["d"] != 1 {
		t.Fatalf("after d joined, read %v; want only d's registration", got)
	}

	zk.set("b", &kazoo.Registration{Subscription: map[string]int{"u": 1}})
	zk.fire("registration/b")
	for deadline := time.Now().Add(5 * time.Second); ws.set.Armed("registration/b"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // the watch's goroutine disarms it
			t.Fatal("b's watch fired but stayed armed")
		}
	}
	if onU := read("after b changed", "a", "b", "c", "d"); len(onU) != 1 || onU[0] != "b" {
		t.Fatalf("after b changed, members subscribed to u: %v; want [b]", onU)
	}
	if got := zk.takeRegReads(); len(got) != 1 || got["b"] != 1 {
		t.Fatalf("after b changed, read %v; want only b's registration", got)
	}
}
