package coord

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/internal/topics"
	"github.com/zkgroup/kafka/kazoo"
)

// silentTopicZooKeeper is a topics.ZooKeeper whose partition-list watches
// never fire until closeWatches: the missed watch the loop's resync is
// there for.
type silentTopicZooKeeper struct {
	mu      sync.Mutex
	parts   []int32
	watches []chan kazoo.Event
}

func (z *silentTopicZooKeeper) Partitions(string) ([]int32, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.parts), nil
}

func (z *silentTopicZooKeeper) WatchPartitions(topic string) ([]int32, <-chan kazoo.Event, error) {
	z.mu.Lock()
	ch := make(chan kazoo.Event, 1)
	z.watches = append(z.watches, ch)
	z.mu.Unlock()
	parts, err := z.Partitions(topic)
	return parts, ch, err
}

func (z *silentTopicZooKeeper) Leader(string, int32) (int32, error) { return 1, nil }
func (z *silentTopicZooKeeper) WatchLeader(string, int32) (int32, <-chan kazoo.Event, error) {
	return 1, nil, nil
}
func (z *silentTopicZooKeeper) WatchTopics() (<-chan kazoo.Event, error) { return nil, nil }
func (z *silentTopicZooKeeper) Generation() uint64                       { return 1 }

func (z *silentTopicZooKeeper) setPartitions(parts ...int32) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.parts = parts
}

func (z *silentTopicZooKeeper) closeWatches() {
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, ch := range z.watches {
		close(ch)
	}
	z.watches = nil
}

// A topic's partition list whose watch never fires is read again at the
// resync, as a registration's is: the resync bounds how long a missed
// watch leaves the assignment stale, here partitions added to a topic
// left unowned.
func TestLoopResyncReadsAPartitionListWhoseWatchNeverFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := newWatchingZooKeeper()
		_ = zk.Register()
		tzk := &silentTopicZooKeeper{parts: []int32{0, 1}}
		fw := &fakeWorkers{}
		stop, done := startLoop(t, Config{Topics: []string{"t"}}, Deps{
			ZooKeeper: zk,
			Topics:    topics.WithLeaderMoves(topics.NewZooKeeper(tzk, false), func(string, map[int32]int32) {}),
			Workers:   fw,
		})
		want := func(step string, tps ...string) {
			t.Helper()
			wantRunning(t, fw, step, tps...)
		}
		want("two partitions", "t/0", "t/1")

		tzk.setPartitions(0, 1, 2, 3) // partitions added; the watch is missed
		time.Sleep(resyncInterval)
		want("resync", "t/0", "t/1", "t/2", "t/3")

		close(stop)
		<-done
		tzk.closeWatches()
		zk.expire()
		synctest.Wait()
	})
}
