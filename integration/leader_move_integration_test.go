package integration

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// leaderMoves is how many times TestIntegrationBrokersLeaderMove moves the
// leader.
const leaderMoves = 3

// TestIntegrationBrokersLeaderMove moves the leader of a partition a group
// consumes while a producer writes to it (a preferred election after the
// replica order changed), three times, with the group reading the metadata
// from ZooKeeper and from Kafka. Every acknowledged message must be
// consumed, none skipped. It logs, per move, how long after the election
// the first message written by the new leader reached the group, and how
// long after its produce was acknowledged: the fetch engine hears of the
// move from the topic source, so it should not wait out a retry's backoff
// (docs/batch-feed.md, "Leaders and epochs"). Needs the three-broker stack
// (integration/brokers-tests.sh).
func TestIntegrationBrokersLeaderMove(t *testing.T) {
	testenv.Integration(t)
	if len(testenv.KafkaAddrs()) < 3 {
		t.Skip("needs three brokers in KAFKA_ADDRS (integration/brokers-tests.sh)")
	}
	for _, source := range []struct {
		name  string
		kafka bool
	}{{"zookeeper", false}, {"kafka", true}} {
		t.Run(source.name, func(t *testing.T) {
			cfg := testConfig()
			if source.kafka {
				cfg.Kafka.Brokers = testenv.KafkaAddrs()
				cfg.Kafka.RefreshInterval = time.Second
			}
			leaderMoveRun(t, cfg)
		})
	}
}

// leaderMoveRun is one run of TestIntegrationBrokersLeaderMove with the
// group's config cfg.
func leaderMoveRun(t *testing.T, cfg *consumergroup.Config) {
	topic := testenv.UniqueName("it")
	replicatedTopic(t, topic)
	client, err := sarama.NewClient(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	cfg.MetricRegistry = metrics.NewRegistry()
	l := newLedger()
	cg := join(t, testenv.UniqueName("g"), []string{topic}, cfg)
	done := consume(t, 0, cg, l)
	defer func() { closeGroup(t, cg); <-done }()
	prod := startAckedProducer(t, topic, 10*time.Millisecond)
	defer prod.stop()
	waitFor(t, 30*time.Second, "the first messages consumed", func() bool { return l.distinct() >= 20 })

	for move := range leaderMoves {
		from, to := nextLeader(t, client, topic)
		fetched := firstFetchTo(cfg.MetricRegistry, to[0])
		start, elected := moveLeader(t, client, topic, to)
		// Acknowledged from now on: written by the new leader.
		end := prod.next()
		var first delivery
		waitFor(t, 60*time.Second, "a message written by the new leader consumed", func() bool {
			var ok bool
			first, ok = firstFrom(l, end)
			return ok
		})
		sinceAck := "unknown"
		if acked := prod.ackedAt(first.offset); !acked.IsZero() {
			sinceAck = first.at.Sub(acked).Round(time.Millisecond).String()
		}
		t.Logf("move %d, leader %d -> %d (election took %v): first fetch from the new leader %v after the election started; "+
			"its first message (offset %d) consumed %v after the election, %s after its produce was acknowledged",
			move+1, from, to[0], elected.Sub(start).Round(time.Millisecond), (<-fetched).Sub(start).Round(time.Millisecond),
			first.offset, first.at.Sub(elected).Round(time.Millisecond), sinceAck)
		time.Sleep(time.Second)
	}

	end := prod.stop()
	waitFor(t, 60*time.Second, "every acknowledged message consumed", func() bool {
		return l.missing(topic, map[int32]int64{0: end}) == 0
	})
	if n := l.duplicates(); n > 0 {
		t.Logf("%d messages consumed twice", n)
	}
}

// clusterAdmin opens a cluster admin of the stack, closed when the test
// ends.
func clusterAdmin(t *testing.T) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatalf("cluster admin: %v", err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	return admin
}

// replicatedTopic creates topic with one partition on three replicas, waits
// until all three are in sync, and deletes it when the test ends.
func replicatedTopic(t *testing.T, topic string) {
	t.Helper()
	if err := clusterAdmin(t).CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3}, false); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		if err := clusterAdmin(t).DeleteTopic(topic); err != nil {
			t.Logf("delete topic %s: %v", topic, err)
		}
	})
	client, err := sarama.NewClient(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitFor(t, 30*time.Second, "three replicas in sync", func() bool {
		if client.RefreshMetadata(topic) != nil {
			return false
		}
		isr, err := client.InSyncReplicas(topic, 0)
		return err == nil && len(isr) == 3
	})
}

// nextLeader returns the partition's leader now and its replicas ordered
// so that the replica after the leader comes first: the preferred leader
// once the order is applied.
func nextLeader(t *testing.T, client sarama.Client, topic string) (int32, []int32) {
	t.Helper()
	if err := client.RefreshMetadata(topic); err != nil {
		t.Fatal(err)
	}
	leader, err := client.Leader(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	replicas, err := client.Replicas(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(replicas)
	i := slices.Index(replicas, leader.ID())
	var order []int32
	for j := range replicas {
		order = append(order, replicas[(i+1+j)%len(replicas)])
	}
	return leader.ID(), order
}

// moveLeader makes replicas the replica order of topic's partition and
// elects its preferred leader, replicas[0], through a cluster admin of its
// own (a request that timed out leaves an admin's connection unusable). It
// returns when the election started and when client saw it done.
func moveLeader(t *testing.T, client sarama.Client, topic string, replicas []int32) (start, elected time.Time) {
	t.Helper()
	admin := clusterAdmin(t)
	if err := admin.AlterPartitionReassignments(topic, [][]int32{replicas}); err != nil {
		t.Fatalf("reorder the replicas of %s/0 to %v: %v", topic, replicas, err)
	}
	waitFor(t, 30*time.Second, "the reassignment", func() bool { return reassigned(admin, topic) })
	start = time.Now()
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {0}})
	switch r := res[topic][0]; {
	case err != nil:
		// Kafka may leave the answer out while the election went through:
		// the client below tells.
		t.Logf("elect the preferred leader of %s/0: %v", topic, err)
	case r != nil && !errors.Is(r.ErrorCode, sarama.ErrNoError):
		t.Fatalf("elect the preferred leader of %s/0: %v", topic, r.ErrorCode)
	}
	elected = time.Now()
	waitFor(t, 30*time.Second, "the new leader", func() bool {
		if client.RefreshMetadata(topic) != nil {
			return false
		}
		b, err := client.Leader(topic, 0)
		return err == nil && b.ID() == replicas[0]
	})
	return start, elected
}

// reassigned reports whether no reassignment of topic's partition is
// under way.
func reassigned(admin sarama.ClusterAdmin, topic string) bool {
	status, err := admin.ListPartitionReassignments(topic, []int32{0})
	return err == nil && len(status[topic]) == 0
}

// firstFetchTo returns a channel that receives the time of the first
// fetch request sent to broker id (sarama's per-broker meter of Fetch
// requests in registry) after the call, or the zero time after 60 s.
func firstFetchTo(registry metrics.Registry, id int32) <-chan time.Time {
	meter := metrics.GetOrRegisterMeter(fmt.Sprintf("protocol-requests-rate-1-for-broker-%d", id), registry)
	before := meter.Count()
	ch := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if meter.Count() > before {
				ch <- time.Now()
				return
			}
		}
		ch <- time.Time{}
	}()
	return ch
}

// firstFrom returns the first delivery, in time, of an offset at or after
// from.
func firstFrom(l *ledger, from int64) (delivery, bool) {
	for _, d := range l.snapshot() {
		if d.offset >= from {
			return d, true
		}
	}
	return delivery{}, false
}

// ackedProducer writes one message at a time to partition 0 of a topic,
// every period, and records when each offset was acknowledged. A failed
// send (the leader moving under it) is tried again by the next tick.
type ackedProducer struct {
	stopC    chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu    sync.Mutex
	acked map[int64]time.Time
	end   int64 // one past the highest offset acknowledged
}

// startAckedProducer starts an ackedProducer of topic; it stops when the
// test ends.
func startAckedProducer(t *testing.T, topic string, period time.Duration) *ackedProducer {
	t.Helper()
	p := newProducer(t, nil)
	ap := &ackedProducer{stopC: make(chan struct{}), done: make(chan struct{}), acked: make(map[int64]time.Time)}
	go func() {
		defer close(ap.done)
		defer p.Close()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			_, offset, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("m")})
			if err == nil {
				ap.mu.Lock()
				ap.acked[offset] = time.Now()
				ap.end = max(ap.end, offset+1)
				ap.mu.Unlock()
			}
			select {
			case <-ap.stopC:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { ap.stop() })
	return ap
}

// next returns one past the highest offset acknowledged so far.
func (ap *ackedProducer) next() int64 {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.end
}

// ackedAt returns when offset was acknowledged (zero: not known).
func (ap *ackedProducer) ackedAt(offset int64) time.Time {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.acked[offset]
}

// stop stops the producer and returns one past the highest offset
// acknowledged: every offset below it is in the log.
func (ap *ackedProducer) stop() int64 {
	ap.stopOnce.Do(func() { close(ap.stopC) })
	<-ap.done
	return ap.next()
}
