package coord

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// failingZooKeeper is fakeZooKeeper whose first failures listings of the
// instances fail; it records when each listing was asked for.
type failingZooKeeper struct {
	*fakeZooKeeper
	failures int
	mu       sync.Mutex
	reads    []time.Time
}

var errZooKeeperAway = errors.New("zk: connection closed")

func (z *failingZooKeeper) Instances() ([]string, error) {
	z.mu.Lock()
	z.reads = append(z.reads, time.Now())
	fail := len(z.reads) <= z.failures
	z.mu.Unlock()
	if fail {
		return nil, errZooKeeperAway
	}
	return z.fakeZooKeeper.Instances()
}

func (z *failingZooKeeper) WatchInstances() ([]string, <-chan kazoo.Event, error) {
	ids, err := z.Instances()
	return ids, nil, err
}

func (z *failingZooKeeper) waits() []time.Duration {
	z.mu.Lock()
	defer z.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(z.reads); i++ {
		out = append(out, z.reads[i].Sub(z.reads[i-1]))
	}
	return out
}

// readRetryLoop runs a loop over zk until stop is closed; reported
// collects what it reports.
func readRetryLoop(zk ZooKeeper, fw Workers, stop chan struct{}, reported *[]error) (done chan struct{}) {
	var mu sync.Mutex
	l := New(Config{InstanceID: "b", Strategy: "range-by-id", RetryCooldown: time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
		ZooKeeper: zk,
		Topics:    fixedTopics{"t": {{ID: 0, Leader: 1}}},
		Workers:   fw,
		Stop:      stop,
		Log:       slog.New(slog.DiscardHandler),
		Report: func(_ string, _ int32, err error) {
			mu.Lock()
			*reported = append(*reported, err)
			mu.Unlock()
		},
		RegistrationPath: func(id string) string { return "/consumers/g/ids/" + id },
		Metrics:          nopMetrics{},
	})
	done = make(chan struct{})
	go func() { l.Run(); close(done) }()
	return done
}

// After failed reads of the view the loop reads again after a wait that
// doubles from readRetryBackoff up to readRetryMaxBackoff, reports the
// first failure, and reconciles once a read succeeds.
func TestLoopRetriesFailedReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := &failingZooKeeper{fakeZooKeeper: &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{}}, failures: 7}
		if err := zk.Register(); err != nil {
			t.Fatal(err)
		}
		fw := &fakeWorkers{}
		stop := make(chan struct{})
		var reported []error
		done := readRetryLoop(zk, fw, stop, &reported)
		time.Sleep(time.Minute)
		synctest.Wait()
		close(stop)
		<-done

		ms := time.Millisecond
		want := []time.Duration{200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 5 * time.Second, 5 * time.Second}
		if got := zk.waits(); !slices.Equal(got[:min(len(got), len(want))], want) {
			t.Errorf("waits between reads %v, want %v first", got, want)
		}
		if len(fw.started) != 1 {
			t.Errorf("%d workers started, want partition 0's once a read succeeded", len(fw.started))
		}
		if len(reported) != 1 || !errors.Is(reported[0], errZooKeeperAway) {
			t.Errorf("reported %v, want the first failure alone", reported)
		}
	})
}

// A closed stop ends the wait before the next read: the loop returns
// without reading again.
func TestLoopStopsWhileWaitingToRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := &failingZooKeeper{fakeZooKeeper: &fakeZooKeeper{self: "b", regs: map[string]*kazoo.Registration{}}, failures: 100}
		stop := make(chan struct{})
		var reported []error
		done := readRetryLoop(zk, &fakeWorkers{}, stop, &reported)
		time.Sleep(300 * time.Millisecond) // two reads (at 0 and 200 ms); the next is due at 600 ms
		synctest.Wait()
		close(stop)
		<-done
		if n := len(zk.reads); n != 2 {
			t.Errorf("%d reads, want 2", n)
		}
	})
}
