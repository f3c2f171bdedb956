package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// ownerObserver records, from its own ZooKeeper client, when each owner node
// of a topic is deleted (a release).
type ownerObserver struct {
	kz   *kazoo.Kazoo
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	releases map[int32][]time.Time
}

// observeOwners starts an ownerObserver of topic's partitions in group,
// stopped when the test ends. The history recorder polls the owners; this
// one watches them, for the time of a release to the millisecond.
func observeOwners(t testing.TB, group, topic string, partitions int32) *ownerObserver {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &ownerObserver{kz: kz, stop: make(chan struct{}), releases: make(map[int32][]time.Time)}
	cg := kz.Consumergroup(group)
	for p := int32(0); p < partitions; p++ {
		o.wg.Add(1)
		go func(p int32) {
			defer o.wg.Done()
			for {
				owner, ch, err := cg.WatchPartitionOwner(topic, p)
				if err != nil {
					return
				}
				if owner == nil { // free now: wait until someone claims it
					select {
					case <-o.stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					continue
				}
				select {
				case ev, ok := <-ch:
					if ok && ev.Type == kazoo.EventNodeDeleted {
						o.mu.Lock()
						o.releases[p] = append(o.releases[p], time.Now())
						o.mu.Unlock()
					}
					if !ok || ev.Type == kazoo.EventNotWatching {
						return
					}
				case <-o.stop:
					return
				}
			}
		}(p)
	}
	t.Cleanup(func() {
		close(o.stop)
		_ = o.kz.Close()
		o.wg.Wait()
	})
	return o
}

// firstReleaseAfter returns the first release of p after t. The time is
// when the observer's watch fired, which a loaded machine may deliver a few
// milliseconds after the deletion itself: it can come after the new
// owner's first message.
func (o *ownerObserver) firstReleaseAfter(p int32, t time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var best time.Time
	for _, r := range o.releases[p] {
		if r.After(t) && (best.IsZero() || r.Before(best)) {
			best = r
		}
	}
	return best, !best.IsZero()
}
