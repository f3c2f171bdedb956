package coord

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/kazoo"
)

// fakeReservations holds the static members' reservations; it arms no
// watches.
type fakeReservations struct {
	mu      sync.Mutex
	nodes   map[string]*kazoo.StaticMember
	deleted []string // "id@version" of each deletion that succeeded
	zxid    int64    // of the last write
}

func (r *fakeReservations) Reserved() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id := range r.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (r *fakeReservations) WatchReserved() ([]string, <-chan kazoo.Event, error) {
	ids, err := r.Reserved()
	return ids, nil, err
}

func (r *fakeReservations) Reservation(id string) (*kazoo.StaticMember, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[id]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", id, kazoo.ErrNoReservation)
	}
	c := *n
	return &c, nil
}

func (r *fakeReservations) DeleteReservation(id string, version int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[id]
	if !ok || n.Version != version {
		return fmt.Errorf("delete %s@%d: %w", id, version, kazoo.ErrNoReservation)
	}
	delete(r.nodes, id)
	r.deleted = append(r.deleted, fmt.Sprintf("%s@%d", id, version))
	return nil
}

// write is the member writing its reservation again, as it does when it
// registers: the version moves.
func (r *fakeReservations) write(id string, grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := int32(0)
	if n, ok := r.nodes[id]; ok {
		v = n.Version + 1
	}
	r.zxid++
	r.nodes[id] = &kazoo.StaticMember{ID: id, Registration: &kazoo.Registration{Subscription: map[string]int{"t": 1}}, GraceWindow: grace, Version: v, Mzxid: r.zxid}
}

func (r *fakeReservations) deletions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.deleted)
}

// staticLoop runs a loop for instance "b" over six partitions of topic t,
// with members a and b registered, until the test ends.
type staticLoop struct {
	zk       *fakeZooKeeper
	workers  *exitingWorkers
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	reported []error
	fenced   []error // told through Deps.Fenced
}

// newGroupZooKeeper is a fakeZooKeeper for instance b with a registered.
func newGroupZooKeeper() *fakeZooKeeper {
	return &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{"a": {Subscription: map[string]int{"t": 1}}}}
}

func startStaticLoop(t *testing.T, zkf *fakeZooKeeper, res Reservations, register func() error) *staticLoop {
	t.Helper()
	return startStaticLoopOn(t, zkf, res, register, &exitingWorkers{})
}

// startStaticLoopOn is startStaticLoop over workers.
func startStaticLoopOn(t *testing.T, zkf *fakeZooKeeper, res Reservations, register func() error, workers *exitingWorkers) *staticLoop {
	t.Helper()
	s := &staticLoop{
		zk:      zkf,
		workers: workers,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if err := s.zk.Register(); err != nil {
		t.Fatal(err)
	}
	var zk ZooKeeper = s.zk
	if register != nil {
		zk = registerOverride{s.zk, register}
	}
	parts := make([]topics.Partition, 6)
	for i := range parts {
		parts[i] = topics.Partition{ID: int32(i), Leader: 1}
	}
	l := New(Config{InstanceID: "b", Strategy: "range-by-id", RetryCooldown: time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
		ZooKeeper:    zk,
		Reservations: res,
		Topics:       fixedTopics{"t": parts},
		Workers:      s.workers,
		Stop:         s.stop,
		Log:          slog.New(slog.DiscardHandler),
		Report: func(_ string, _ int32, err error) {
			s.mu.Lock()
			s.reported = append(s.reported, err)
			s.mu.Unlock()
		},
		RegistrationPath: func(id string) string { return "/consumers/g/ids/" + id },
		Metrics:          nopMetrics{},
		Fenced: func(err error) {
			s.mu.Lock()
			s.fenced = append(s.fenced, err)
			s.mu.Unlock()
		},
	})
	go func() { l.Run(); close(s.done) }()
	return s
}

func (s *staticLoop) close() {
	close(s.stop)
	<-s.done
}

// running lists the partitions whose latest worker has not stopped.
func (s *staticLoop) running() []int32 {
	var ps []int32
	for p := range int32(6) {
		ws := s.workers.startedFor(p)
		if len(ws) > 0 && !ws[len(ws)-1].stopped() {
			ps = append(ps, p)
		}
	}
	return ps
}

// registerOverride is a ZooKeeper whose Register is replaced.
type registerOverride struct {
	*fakeZooKeeper
	register func() error
}

func (z registerOverride) Register() error { return z.register() }

// An absent static member keeps its share for its grace window, timed
// from when this instance first saw it absent; then the reservation is
// deleted (fenced by the version seen) and its partitions move.
func TestReservationKeepsShareForGraceWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("c", 10*time.Second) // c is static and absent
		s := startStaticLoop(t, newGroupZooKeeper(), res, nil)
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("with c reserved, b runs %v, want [2 3] (a: 0 1, c: 4 5)", got)
		}
		time.Sleep(9 * time.Second)
		synctest.Wait()
		if d := res.deletions(); len(d) > 0 {
			t.Fatalf("reservation deleted before the window ended: %v", d)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if d := res.deletions(); !slices.Equal(d, []string{"c@0"}) {
			t.Fatalf("deletions %v, want [c@0] when the window ended", d)
		}
		if got := s.running(); !slices.Equal(got, []int32{3, 4, 5}) {
			t.Fatalf("after c's window, b runs %v, want [3 4 5]", got)
		}
		s.close()
		if len(s.reported) > 0 {
			t.Errorf("reported %v", s.reported)
		}
	})
}

// A static member that came back keeps its reservation: the deletion is
// fenced by the version seen when it was absent, and a later absence is
// timed afresh. A registered member is not counted twice.
func TestReservationOfReturnedMemberKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("c", 10*time.Second)
		s := startStaticLoop(t, newGroupZooKeeper(), res, nil)
		synctest.Wait()

		// c comes back at 5 s (writing its reservation again) and leaves
		// again at once: its absence is timed from the next read.
		time.Sleep(5 * time.Second)
		res.write("c", 10*time.Second)
		s.zk.mu.Lock()
		s.zk.regs["c"] = &kazoo.Registration{Subscription: map[string]int{"t": 1}}
		s.zk.mu.Unlock()
		time.Sleep(5 * time.Second) // the first window's end: a read, which sees c registered
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("with c registered, b runs %v, want [2 3]", got)
		}
		if d := res.deletions(); len(d) > 0 {
			t.Fatalf("the reservation of a registered member was deleted: %v", d)
		}
		s.zk.mu.Lock()
		delete(s.zk.regs, "c")
		s.zk.mu.Unlock()
		time.Sleep(20 * time.Second) // no watches here: the resync at 30 s sees c gone
		synctest.Wait()
		if d := res.deletions(); len(d) > 0 {
			t.Fatalf("deleted %v within the second absence's window", d)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if d := res.deletions(); !slices.Equal(d, []string{"c@1"}) {
			t.Fatalf("deletions %v, want [c@1] after the second window", d)
		}
		s.close()
	})
}

// A static member that comes back between this instance's read and its
// deletion keeps its reservation: the deletion fails on the version, and
// the partitions stay reserved.
func TestReservationDeletionFencedByVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("c", 0) // no window: deleted at the first read
		zk := newGroupZooKeeper()
		s := startStaticLoop(t, zk, &racingReservations{fakeReservations: res, zk: zk}, nil)
		synctest.Wait()
		if d := res.deletions(); len(d) > 0 {
			t.Fatalf("deleted %v although c wrote its reservation again", d)
		}
		if got := s.running(); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("b runs %v, want [2 3]: c's share stays reserved while its deletion is refused", got)
		}
		s.close()
	})
}

// racingReservations is fakeReservations where the member comes back
// (registers and writes its reservation again) just before a deletion.
type racingReservations struct {
	*fakeReservations
	zk *fakeZooKeeper
}

func (r *racingReservations) DeleteReservation(id string, version int32) error {
	r.zk.mu.Lock()
	r.zk.regs[id] = &kazoo.Registration{Subscription: map[string]int{"t": 1}}
	r.zk.mu.Unlock()
	r.write(id, 0)
	return r.fakeReservations.DeleteReservation(id, version)
}

// An instance whose static id was registered by another session while
// its own registration was gone is fenced: it stops its partitions,
// reports kazoo.ErrFencedInstanceID, and claims nothing again.
func TestFencedInstanceStopsConsuming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		registers := 0
		var s *staticLoop
		s = startStaticLoop(t, newGroupZooKeeper(), res, func() error {
			registers++
			return fmt.Errorf("register: %w", kazoo.ErrFencedInstanceID)
		})
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{3, 4, 5}) {
			t.Fatalf("b runs %v, want [3 4 5]", got)
		}
		s.zk.mu.Lock()
		delete(s.zk.regs, "b") // gone; the other instance's node is not in this fake's list
		s.zk.mu.Unlock()
		time.Sleep(resyncInterval)
		synctest.Wait()
		if got := s.running(); len(got) > 0 {
			t.Fatalf("a fenced instance still runs %v", got)
		}
		s.zk.mu.Lock()
		s.zk.regs["b"] = &kazoo.Registration{Subscription: map[string]int{"t": 1}} // the other instance
		s.zk.mu.Unlock()
		time.Sleep(2 * resyncInterval)
		synctest.Wait()
		if got := s.running(); len(got) > 0 {
			t.Fatalf("a fenced instance started %v again", got)
		}
		if registers != 1 {
			t.Errorf("registered %d times, want once (then fenced)", registers)
		}
		s.close()
		if len(s.reported) != 1 || !errors.Is(s.reported[0], kazoo.ErrFencedInstanceID) {
			t.Errorf("reported %v, want one error wrapping ErrFencedInstanceID", s.reported)
		}
		if len(s.fenced) != 1 || !errors.Is(s.fenced[0], kazoo.ErrFencedInstanceID) {
			t.Errorf("told Fenced %v, want once, with ErrFencedInstanceID", s.fenced)
		}
	})
}

// A reservation deleted by another instance and created again by the
// member (back, then gone again) between two reads of this instance is a
// new absence, timed afresh, although its version is 0 again.
func TestReservationCreatedAgainIsANewAbsence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("c", 10*time.Second)
		s := startStaticLoop(t, newGroupZooKeeper(), res, nil)
		synctest.Wait()
		time.Sleep(5 * time.Second)
		res.mu.Lock()
		delete(res.nodes, "c") // another instance's window ended first
		res.mu.Unlock()
		res.write("c", 10*time.Second) // c back (and gone again): version 0 again
		time.Sleep(5 * time.Second)    // the first absence's window ends here
		synctest.Wait()
		if d := res.deletions(); len(d) > 0 {
			t.Fatalf("deleted %v: the new absence was taken for the old one", d)
		}
		if got := s.running(); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("b runs %v, want [2 3] while c's new absence lasts", got)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if d := res.deletions(); !slices.Equal(d, []string{"c@0"}) {
			t.Fatalf("deletions %v, want [c@0] once the new absence's window ended", d)
		}
		s.close()
	})
}

// An absent static member keeps the strategies its registration offered:
// without them, the whole group would fall back from the sticky
// assignment to range for the grace window, and move partitions the
// reservation is there to keep still.
func TestReservedMemberKeepsItsOffers(t *testing.T) {
	reg := &kazoo.Registration{Subscription: map[string]int{"t": 1}, Assignment: []string{"sticky"}}
	m, err := reservedMember("a", reg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Offers, assign.OfferedBy(reg)) || len(m.Offers) == 0 {
		t.Fatalf("reserved member offers %v, want %v", m.Offers, assign.OfferedBy(reg))
	}
}

// deniedReservations refuses, as ZooKeeper does for a node whose ACL
// denies this client, to read one reservation or to delete one.
type deniedReservations struct {
	*fakeReservations
	unreadable, undeletable string
}

func (r deniedReservations) Reservation(id string) (*kazoo.StaticMember, error) {
	if id == r.unreadable {
		return nil, fmt.Errorf("get %s: %w", id, zk.ErrNoAuth)
	}
	return r.fakeReservations.Reservation(id)
}

func (r deniedReservations) DeleteReservation(id string, version int32) error {
	if id == r.undeletable {
		return fmt.Errorf("delete %s@%d: %w", id, version, zk.ErrNoAuth)
	}
	return r.fakeReservations.DeleteReservation(id, version)
}

// A reservation this instance may not read keeps no share, as a malformed
// one: it does not hold every rebalance of the group back (each view
// failed on it, for good).
func TestUnreadableReservationKeepsNoShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("x", 10*time.Second)
		s := startStaticLoop(t, newGroupZooKeeper(), deniedReservations{fakeReservations: res, unreadable: "x"}, nil)
		defer s.close()
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{3, 4, 5}) {
			t.Fatalf("with x's reservation unreadable, b runs %v, want [3 4 5] (a: 0 1 2)", got)
		}
	})
}

// A reservation whose window ended but that this instance may not delete
// ends for this instance all the same: its partitions move, instead of
// every later view failing on the deletion.
func TestUndeletableReservationEndsWithItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		res.write("c", 10*time.Second)
		s := startStaticLoop(t, newGroupZooKeeper(), deniedReservations{fakeReservations: res, undeletable: "c"}, nil)
		defer s.close()
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{2, 3}) {
			t.Fatalf("with c reserved, b runs %v, want [2 3]", got)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := s.running(); !slices.Equal(got, []int32{3, 4, 5}) {
			t.Fatalf("after c's window, its reservation undeletable, b runs %v, want [3 4 5]", got)
		}
	})
}
