package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Where the group reads the cluster's metadata, measured on either stack:
// ZooKeeper watches (ZooKeeper-mode stack only) and Kafka metadata at two
// refresh intervals.

type metadataSource struct {
	name    string
	refresh time.Duration // 0: ZooKeeper watches
}

func (s metadataSource) config() *consumergroup.Config {
	cfg := testConfig()
	cfg.Kafka.Brokers = nil
	if s.refresh > 0 {
		cfg.Kafka.Brokers = testenv.KafkaAddrs()
		cfg.Kafka.RefreshInterval = s.refresh
	}
	return cfg
}

func metadataSources() []metadataSource {
	var out []metadataSource
	if !testenv.KRaft() {
		out = append(out, metadataSource{"zookeeper watch", 0})
	}
	return append(out,
		metadataSource{"kafka metadata, 1s", time.Second},
		metadataSource{"kafka metadata, 10s (default)", consumergroup.DefaultKafkaRefreshInterval})
}

// TestIntegrationMetadataPickup: partitions added to a subscribed topic
// are consumed by a group of each metadata source, within the source's
// bound (at once for the ZooKeeper watch, the refresh interval for Kafka's
// metadata), with a few seconds for the claim and the first fetch. It
// reports each source's time from the partitions' addition to the first
// message of the new partition.
func TestIntegrationMetadataPickup(t *testing.T) {
	testenv.Integration(t)
	const rounds = 3
	topic := newTopic(t, 1)
	produceOneTo(t, topic, 0)
	sources := metadataSources()
	ledgers := make([]*ledger, len(sources))
	histories := make([]*history, len(sources))
	for i, s := range sources {
		group := testenv.UniqueName("g")
		ledgers[i] = newLedger()
		histories[i] = recordDeliveries(t, group, topic, rounds+1, ledgers[i])
		cg := join(t, group, []string{topic}, s.config())
		done := consume(t, i, cg, ledgers[i])
		t.Cleanup(func() { closeGroup(t, cg); <-done })
	}
	seen := func(l *ledger, p int32) (time.Time, bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, d := range l.all {
			if d.partition == p {
				return d.at, true
			}
		}
		return time.Time{}, false
	}
	for i := range sources {
		waitFor(t, 30*time.Second, sources[i].name+" consuming partition 0", func() bool { _, ok := seen(ledgers[i], 0); return ok })
	}

	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	lat := make([][]time.Duration, len(sources))
	for r := int32(1); r <= rounds; r++ {
		if err := admin.CreatePartitions(topic, r+1, nil, false); err != nil {
			t.Fatalf("add partition %d: %v", r, err)
		}
		added := time.Now()
		produceOneTo(t, topic, r)
		for i, s := range sources {
			bound := s.refresh + 5*time.Second
			waitFor(t, bound+10*time.Second, fmt.Sprintf("%s consuming partition %d", s.name, r), func() bool { _, ok := seen(ledgers[i], r); return ok })
			at, _ := seen(ledgers[i], r)
			d := at.Sub(added)
			if d > bound {
				t.Errorf("%s: partition %d consumed %v after it was added, want within %v", s.name, r, d, bound)
			}
			lat[i] = append(lat[i], d.Round(time.Millisecond))
		}
	}
	produced := make(map[int32]int64)
	for p := range int32(rounds + 1) {
		produced[p] = 1
	}
	for _, h := range histories {
		h.assert(expectation{produced: produced})
	}
	for i, s := range sources {
		sorted := slices.Clone(lat[i])
		slices.Sort(sorted)
		t.Logf("added partition -> first message, %s: %v (median %v)", s.name, lat[i], sorted[len(sorted)/2])
	}
}

// TestIntegrationMetadataRequestRate counts the metadata requests a group
// sends while nothing changes (sarama's meter of Metadata requests, API key
// 3, over every client of the group): one per refresh interval with Kafka's
// metadata, none with ZooKeeper watches.
func TestIntegrationMetadataRequestRate(t *testing.T) {
	testenv.Integration(t)
	const window = 30 * time.Second
	topic := newTopic(t, 4)
	sources := metadataSources()
	meters := make([]metrics.Meter, len(sources))
	for i, s := range sources {
		cfg := s.config()
		cfg.MetricRegistry = metrics.NewRegistry()
		cg := join(t, testenv.UniqueName("g"), []string{topic}, cfg)
		done := consume(t, i, cg, newLedger())
		t.Cleanup(func() { closeGroup(t, cg); <-done })
		meters[i] = metrics.GetOrRegisterMeter("protocol-requests-rate-3", cfg.MetricRegistry)
	}
	time.Sleep(2 * time.Second) // past the joins and the first fetches
	before := make([]int64, len(sources))
	for i, m := range meters {
		before[i] = m.Count()
	}
	time.Sleep(window)
	for i, s := range sources {
		n := meters[i].Count() - before[i]
		perMinute := float64(n) * float64(time.Minute) / float64(window)
		t.Logf("%s: %d metadata requests in %v (%.0f per minute)", s.name, n, window, perMinute)
		want := int64(0)
		if s.refresh > 0 {
			want = int64(window / s.refresh)
		}
		if n < want-1 || n > want+2 {
			t.Errorf("%s: %d metadata requests in %v, want %d (+2/-1)", s.name, n, window, want)
		}
	}
}
