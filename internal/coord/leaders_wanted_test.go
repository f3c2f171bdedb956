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

// The first view of an all-sticky group asks for no partition's leader;
// once the partitions it gained are claimed the loop asks for the leaders
// of those (whose moves the fetches follow), without reading the view
// again; a
// member that does not offer sticky makes the group fall back to
// range-by-leader, and the view asks for every leader.
func TestLoopReadsLeadersOnlyWhenTheAssignmentNeedsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{
			"a": stickyRegistration(), "b": stickyRegistration(),
		}}
		counted := &listCounting{fakeZooKeeper: zk}
		src := &askedTopics{fixedTopics: fixedTopics{"t": {{ID: 0, Leader: 1}, {ID: 1, Leader: 1}, {ID: 2, Leader: 2}, {ID: 3, Leader: 2}}}}
		fw := &fakeWorkers{}
		stop := make(chan struct{})
		l := New(Config{InstanceID: "b", Strategy: "sticky", RetryCooldown: time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
			ZooKeeper:        counted,
			Topics:           src,
			Workers:          fw,
			Stop:             stop,
			Log:              slog.New(slog.DiscardHandler),
			Report:           func(_ string, _ int32, err error) { t.Errorf("reported %v", err) },
			RegistrationPath: func(id string) string { return "/consumers/g/ids/" + id },
			Metrics:          nopMetrics{},
		})
		done := make(chan struct{})
		go func() { l.Run(); close(done) }()
		defer func() { close(stop); <-done }()

		synctest.Wait()
		if got := src.took(); !slices.Equal(got, []string{"[]"}) {
			t.Fatalf("first view asked for leaders %q, want none", got)
		}
		fw.mu.Lock()
		var gained []int32
		for _, w := range fw.started {
			gained = append(gained, w.tp.Partition)
			close(w.claimed)
		}
		fw.mu.Unlock()
		slices.Sort(gained)
		if len(gained) == 0 {
			t.Fatal("no partition assigned to b")
		}

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
