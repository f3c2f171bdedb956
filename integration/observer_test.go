package integration

import (
	"fmt"
	"sync"
	"testing"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// offsetObserver follows a group's committed offsets from its own ZooKeeper
// client, through watches, and records every value that is lower than the
// one before it (a regression). ZooKeeper versions tell it how many sets it
// could not see between two reads; it reports those too.
type offsetObserver struct {
	kz   *kazoo.Kazoo
	stop chan struct{}
	wg   sync.WaitGroup

	mu          sync.Mutex
	regressions []string
	missedSets  int
	sets        int
	last        map[int32]int64
}

func observeOffsets(t testing.TB, group, topic string, partitions int32) *offsetObserver {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("observer: %v", err)
	}
	o := &offsetObserver{kz: kz, stop: make(chan struct{}), last: make(map[int32]int64)}
	cg := kz.Consumergroup(group)
	for p := int32(0); p < partitions; p++ {
		o.wg.Add(1)
		go o.follow(cg, topic, p)
	}
	t.Cleanup(o.close)
	return o
}

func (o *offsetObserver) follow(cg *kazoo.Consumergroup, topic string, p int32) {
	defer o.wg.Done()
	prevOffset, prevVersion := int64(-1), int32(-1)
	for {
		offset, version, ch, err := cg.WatchOffset(topic, p)
		if err == nil && version >= 0 {
			o.mu.Lock()
			if version > prevVersion {
				o.sets += int(version - prevVersion)
				if prevVersion >= 0 && version > prevVersion+1 {
					o.missedSets += int(version - prevVersion - 1)
				}
				if offset < prevOffset {
					o.regressions = append(o.regressions, fmt.Sprintf("%s/%d: %d -> %d (version %d -> %d)", topic, p, prevOffset, offset, prevVersion, version))
				}
				prevOffset, prevVersion = offset, version
				o.last[p] = offset
			}
			o.mu.Unlock()
		}
		if ch == nil {
			return // the connection is closing
		}
		select {
		case <-ch:
		case <-o.stop:
			return
		}
	}
}

func (o *offsetObserver) close() {
	select {
	case <-o.stop:
		return
	default:
	}
	close(o.stop)
	_ = o.kz.Close()
	o.wg.Wait()
}

// Regressions returns every observed decrease of a committed offset.
func (o *offsetObserver) Regressions() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.regressions...)
}

// Counts returns how many sets happened and how many of them the observer
// could not see individually.
func (o *offsetObserver) Counts() (sets, missed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sets, o.missedSets
}
