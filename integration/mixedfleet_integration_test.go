package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationMixedFleet: during a rolling upgrade, a member of this
// library shares a group with a member that writes exactly what kazoo-go
// and wvanbergen/kafka write: a registration whose timestamp is a JSON
// number, owner nodes created without touching the epochs, offsets set
// plainly (no fence). The two compute the same assignment and hand the
// partitions back and forth: nothing is reported malformed, no partition
// stays unowned, the committed offsets never go backwards, and every
// message is consumed, none twice.
func TestIntegrationMixedFleet(t *testing.T) {
	testenv.Integration(t)
	const partitions = int32(4)
	topic := newTopic(t, partitions)
	counts := produce(t, topic, 400)
	group := testenv.UniqueName("g")
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)

	a := join(t, group, []string{topic}, nil)
	var errsMu sync.Mutex
	var errs []error
	doneA := readGroup(a, 1, l, 0, func(err error) {
		errsMu.Lock()
		errs = append(errs, err)
		errsMu.Unlock()
		t.Logf("A: %v", err)
	})
	waitFor(t, 30*time.Second, "A to consume the first batch", func() bool { return l.distinct() >= 400 })

	u := startUpstreamMember(t, group, topic, partitions, l)
	waitFor(t, 30*time.Second, "U to own its share", func() bool { return len(u.ownedNow()) == int(partitions)/2 })
	produce(t, topic, 400)
	waitFor(t, 30*time.Second, "the second batch", func() bool { return l.distinct() >= 800 })
	if ok, why := h.convergedNow(expectation{liveCount: 2}); !ok {
		t.Errorf("ownership while both members run: %s", why)
	}
	// The upstream side reads our registration as kazoo-go declares it.
	data, _, err := u.conn.Get(fmt.Sprintf("/consumers/%s/ids/%s", group, aID(t, h, u.id)))
	if err != nil {
		t.Fatal(err)
	}
	var upstreamReg struct {
		Pattern      string         `json:"pattern"`
		Subscription map[string]int `json:"subscription"`
		Timestamp    int64          `json:"timestamp"`
		Version      int            `json:"version"`
	}
	if err := json.Unmarshal(data, &upstreamReg); err != nil || upstreamReg.Timestamp == 0 || upstreamReg.Subscription[topic] != 1 {
		t.Errorf("kazoo-go cannot read our registration %s: %v", data, err)
	}

	u.leave(t)
	produce(t, topic, 400)
	total := counts
	for p := range total {
		total[p] += 200 // two more batches of 400 over 4 partitions
	}
	waitFor(t, 30*time.Second, "everything, by A alone", func() bool { return l.missing(topic, total) == 0 })
	closeGroup(t, a)
	<-doneA

	errsMu.Lock()
	defer errsMu.Unlock()
	for _, err := range errs {
		if errors.Is(err, kazoo.ErrMalformed) {
			t.Errorf("the upstream member's data was reported malformed: %v", err)
		}
	}
	if rep := h.assert(expectation{produced: total}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v)", rep.dups, rep.dupsBy)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicates across the hand-overs between the two kinds of member", d)
	}
	t.Logf("mixed fleet: %d deliveries of %d messages; upstream member consumed %d", len(l.snapshot()), l.distinct(), u.delivered())
}

// aID returns the registered instance id that is not skip.
func aID(t *testing.T, h *history, skip string) string {
	t.Helper()
	for _, id := range h.instances() {
		if id != skip {
			return id
		}
	}
	t.Fatal("no other instance registered")
	return ""
}

// upstreamMember behaves as a wvanbergen/kafka member on kazoo-go: it
// registers with a numeric timestamp, claims by creating the owner node
// alone, consumes with sarama from the stored offset and sets the offset
// node plainly.
type upstreamMember struct {
	id    string
	conn  *zk.Conn
	group string
	topic string
	stop  chan struct{}
	done  chan struct{}

	mu    sync.Mutex
	owned []int32
	count int
}

func startUpstreamMember(t *testing.T, group, topic string, partitions int32, l *ledger) *upstreamMember {
	t.Helper()
	conn, _, err := zk.Connect(testenv.ZKServers(), 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	u := &upstreamMember{id: "upstream-" + testenv.UniqueName("u"), conn: conn, group: group, topic: topic,
		stop: make(chan struct{}), done: make(chan struct{})}
	reg := fmt.Sprintf(`{"version":1,"subscription":{%q:1},"pattern":"static","timestamp":%d}`, topic, time.Now().Unix())
	if _, err := conn.Create(fmt.Sprintf("/consumers/%s/ids/%s", group, u.id), []byte(reg), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	go u.run(t, partitions, l)
	return u
}

func (u *upstreamMember) ownedNow() []int32 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.owned)
}

func (u *upstreamMember) delivered() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.count
}

// run claims the partitions upstream's assignment gives it, as upstream
// does: create the owner node, retrying while the previous owner holds it.
func (u *upstreamMember) run(t *testing.T, partitions int32, l *ledger) {
	defer close(u.done)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Error(err)
		return
	}
	defer kz.Close()
	cg := kz.Consumergroup(u.group)
	ids, _, err := u.conn.Children(fmt.Sprintf("/consumers/%s/ids", u.group))
	if err != nil {
		t.Error(err)
		return
	}
	var parts []consumergroup.PartitionInfo
	for p := int32(0); p < partitions; p++ {
		parts = append(parts, consumergroup.PartitionInfo{ID: p, Leader: 1})
	}
	assigned, _ := consumergroup.Assign(consumergroup.StrategyRangeByLeader, ids, parts)
	consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Error(err)
		return
	}
	defer consumer.Close()
	var wg sync.WaitGroup
	for _, pi := range assigned[u.id] {
		owner := fmt.Sprintf("/consumers/%s/owners/%s/%d", u.group, u.topic, pi.ID)
		for {
			_, err := u.conn.Create(owner, []byte(u.id), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
			if err == nil {
				break
			}
			select {
			case <-u.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		u.mu.Lock()
		u.owned = append(u.owned, pi.ID)
		u.mu.Unlock()
		next, err := cg.FetchOffset(u.topic, pi.ID)
		if err != nil {
			t.Error(err)
			return
		}
		if next < 0 {
			next = sarama.OffsetOldest
		}
		pc, err := consumer.ConsumePartition(u.topic, pi.ID, next)
		if err != nil {
			t.Error(err)
			return
		}
		wg.Add(1)
		go func(p int32) {
			defer wg.Done()
			defer pc.Close()
			last := int64(-1)
			commit := func() {
				if last >= 0 {
					if err := cg.CommitOffset(u.topic, p, last+1); err != nil { // a plain set
						t.Errorf("upstream commit: %v", err)
					}
				}
			}
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case m := <-pc.Messages():
					l.add(delivery{consumer: 2, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
					last = m.Offset
					u.mu.Lock()
					u.count++
					u.mu.Unlock()
				case <-tick.C:
					commit()
				case <-u.stop:
					commit()
					return
				}
			}
		}(pi.ID)
	}
	wg.Wait()
}

// leave stops consuming, commits, and deletes the owner nodes and the
// registration, as upstream's Close does.
func (u *upstreamMember) leave(t *testing.T) {
	t.Helper()
	close(u.stop)
	<-u.done
	for _, p := range u.ownedNow() {
		if err := u.conn.Delete(fmt.Sprintf("/consumers/%s/owners/%s/%d", u.group, u.topic, p), -1); err != nil {
			t.Errorf("upstream release %d: %v", p, err)
		}
	}
	if err := u.conn.Delete(fmt.Sprintf("/consumers/%s/ids/%s", u.group, u.id), -1); err != nil {
		t.Errorf("upstream deregister: %v", err)
	}
	u.conn.Close()
}

type silentLogger struct{}

func (silentLogger) Printf(string, ...any) {}
