package coord

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/kazoo"
)

// askedTopics is fixedTopics recording, for each read, the partitions
// whose leaders it was asked for ("all" for every one).
type askedTopics struct {
	fixedTopics
	mu    sync.Mutex
	asked []string
}

func (s *askedTopics) Partitions(topic string, want topics.Leaders) ([]topics.Partition, error) {
	parts, err := s.fixedTopics.Partitions(topic, want)
	var ids []int32
	for _, p := range parts {
		if want.Of != nil && want.Of(p.ID) {
			ids = append(ids, p.ID)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want.All {
		s.asked = append(s.asked, "all")
	} else {
		s.asked = append(s.asked, fmt.Sprint(ids))
	}
	return parts, err
}

func (s *askedTopics) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.asked
	s.asked = nil
	return out
}

// listCounting is fakeZooKeeper counting the listings of the instances,
// one per view read.
type listCounting struct {
	*fakeZooKeeper
	mu    sync.Mutex
	lists int
}

func (z *listCounting) WatchInstances() ([]string, <-chan kazoo.Event, error) {
	z.mu.Lock()
	z.lists++
	z.mu.Unlock()
	return z.fakeZooKeeper.WatchInstances()
}

func (z *listCounting) views() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.lists
}

func stickyRegistration() *kazoo.Registration {
	return &kazoo.Registration{Subscription: map[string]int{"t": 1}, Assignment: []string{"sticky"}}
}

// stickyLoop is a loop of instance b in an all-sticky group of a and b
// over four partitions of t, run until the test's end.
type stickyLoop struct {
	zk      *fakeZooKeeper
	counted *listCounting
	src     *askedTopics
	fw      *fakeWorkers
}

// startStickyLoop starts a stickyLoop; inside a synctest bubble.
func startStickyLoop(t *testing.T) stickyLoop {
	zk := &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{
		"a": stickyRegistration(), "b": stickyRegistration(),
	}}
	s := stickyLoop{zk: zk, counted: &listCounting{fakeZooKeeper: zk},
		src: &askedTopics{fixedTopics: fixedTopics{"t": {{ID: 0, Leader: 1}, {ID: 1, Leader: 1}, {ID: 2, Leader: 2}, {ID: 3, Leader: 2}}}},
		fw:  &fakeWorkers{}}
	stop := make(chan struct{})
	l := New(Config{InstanceID: "b", Strategy: "sticky", RetryCooldown: time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
		ZooKeeper:        s.counted,
		Topics:           s.src,
		Workers:          s.fw,
		Stop:             stop,
		Log:              slog.New(slog.DiscardHandler),
		Report:           func(_ string, _ int32, err error) { t.Errorf("reported %v", err) },
		RegistrationPath: func(id string) string { return "/consumers/g/ids/" + id },
		Metrics:          nopMetrics{},
	})
	done := make(chan struct{})
	go func() { l.Run(); close(done) }()
	t.Cleanup(func() { close(stop); <-done })
	return s
}

// gained closes the chosen channel (claimed or opened) of the workers
// started from the from-th on, up to the to-th (excluded; -1: to the
// last), and returns the partitions of all of them.
func (s stickyLoop) gained(t *testing.T, ch func(*fakeWorker) chan struct{}, from, to int) []int32 {
	t.Helper()
	s.fw.mu.Lock()
	defer s.fw.mu.Unlock()
	var gained []int32
	for i, w := range s.fw.started {
		gained = append(gained, w.tp.Partition)
		if i >= from && (to < 0 || i < to) {
			close(ch(w))
		}
	}
	slices.Sort(gained)
	if len(gained) == 0 {
		t.Fatal("no partition assigned to b")
	}
	return gained
}

func claimedOf(w *fakeWorker) chan struct{} { return w.claimed }
func openedOf(w *fakeWorker) chan struct{}  { return w.opened }

// The first view of an all-sticky group asks for no partition's leader;
// once the partitions it gained are claimed and open the loop asks for
// the leaders of those (whose moves the fetches follow), without reading
// the view again; a member that does not offer sticky makes the group
// fall back to range-by-leader, and the view asks for every leader.
func TestLoopReadsLeadersOnlyWhenTheAssignmentNeedsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startStickyLoop(t)
		zk, counted, src := s.zk, s.counted, s.src
		synctest.Wait()
		if got := src.took(); !slices.Equal(got, []string{"[]"}) {
			t.Fatalf("first view asked for leaders %q, want none", got)
		}
		gained := s.gained(t, claimedOf, 0, -1)
		s.gained(t, openedOf, 0, -1)

		synctest.Wait()
		if got, want := src.took(), []string{fmt.Sprint(gained)}; !slices.Equal(got, want) {
			t.Fatalf("after the claims, asked for leaders %q, want those gained, %q", got, want)
		}
		if n := counted.views(); n != 1 {
			t.Fatalf("%d views read, want the first only: the leaders are read without the view", n)
		}

		zk.mu.Lock()
		zk.regs["c"] = &kazoo.Registration{Subscription: map[string]int{"t": 1}} // offers nothing
		zk.mu.Unlock()
		time.Sleep(resyncInterval) // no watch is armed here: the resync reads
		synctest.Wait()
		if got := src.took(); len(got) == 0 || got[0] != "all" {
			t.Fatalf("with a member not offering sticky, asked for leaders %q, want all", got)
		}
	})
}

// The leaders of the partitions a rebalance gained are read once every one
// of them is open (its offset read, its first fetch under way), not at
// their claims: the reads go over the session that carries the claims and
// the offset reads, and ZooKeeper answers a session's requests in order.
// A partition that does not open holds them back for gainedLeadersWait at
// most.
func TestLoopReadsGainedLeadersOnceTheyAreOpen(t *testing.T) {
	t.Run("all open", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := startStickyLoop(t)
			synctest.Wait()
			s.src.took() // the first view's
			gained := s.gained(t, claimedOf, 0, -1)
			synctest.Wait()
			if got := s.src.took(); len(got) > 0 {
				t.Fatalf("claimed, none open: asked for leaders %q, want none yet", got)
			}
			s.gained(t, openedOf, 1, -1)
			synctest.Wait()
			if got := s.src.took(); len(got) > 0 {
				t.Fatalf("claimed, all open but one: asked for leaders %q, want none yet", got)
			}
			s.gained(t, openedOf, 0, 1)
			synctest.Wait()
			if got, want := s.src.took(), []string{fmt.Sprint(gained)}; !slices.Equal(got, want) {
				t.Fatalf("all open: asked for leaders %q, want those gained, %q", got, want)
			}
		})
	})
	t.Run("one never opens", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := startStickyLoop(t)
			synctest.Wait()
			s.src.took()
			gained := s.gained(t, claimedOf, 0, -1)
			claimedAt := time.Now()
			s.gained(t, openedOf, 1, -1)
			synctest.Wait()
			if got := s.src.took(); len(got) > 0 {
				t.Fatalf("one not open: asked for leaders %q at once, want none before gainedLeadersWait", got)
			}
			time.Sleep(gainedLeadersWait - time.Millisecond)
			synctest.Wait()
			if got := s.src.took(); len(got) > 0 {
				t.Fatalf("one not open: asked for leaders %q after %v, want none before gainedLeadersWait", got, time.Since(claimedAt))
			}
			time.Sleep(time.Millisecond)
			synctest.Wait()
			if got, want := s.src.took(), []string{fmt.Sprint(gained)}; !slices.Equal(got, want) {
				t.Fatalf("gainedLeadersWait after the claims: asked for leaders %q, want those gained, %q", got, want)
			}
		})
	})
}
