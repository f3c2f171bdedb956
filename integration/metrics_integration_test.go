package integration

import (
	"fmt"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationMetrics: the group registers its metrics in the sarama
// config's MetricRegistry, with plausible values after a short run.
func TestIntegrationMetrics(t *testing.T) {
	testenv.Integration(t)
	const partitions = int32(4)
	topic := newTopic(t, partitions)
	counts := produce(t, topic, 400)
	cfg := testConfig()
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	group := testenv.UniqueName("g")
	cg := join(t, group, []string{topic}, cfg)
	l := newLedger()
	done := consume(t, 1, cg, l)
	waitFor(t, 30*time.Second, "every message", func() bool { return l.distinct() >= 400 })
	// Every name carries the group: name/group, and for a lag gauge
	// zkgroup-lag/group/topic/partition.
	get := func(name string) any { return reg.Get(name + "/" + group) }
	counter := func(name string) int64 {
		if c, ok := get(name).(metrics.Counter); ok {
			return c.Count()
		}
		t.Fatalf("metric %s/%s missing or not a counter: %T", name, group, get(name))
		return 0
	}
	gauge := func(name string) (int64, bool) {
		g, ok := get(name).(metrics.Gauge)
		if !ok {
			return 0, false
		}
		return g.Value(), true
	}
	lag := func(p int32) (int64, bool) {
		g, ok := reg.Get(fmt.Sprintf("zkgroup-lag/%s/%s/%d", group, topic, p)).(metrics.Gauge)
		if !ok {
			return 0, false
		}
		return g.Value(), true
	}
	waitFor(t, 10*time.Second, "the commits to settle the lag", func() bool {
		for p := int32(0); p < partitions; p++ {
			if v, ok := lag(p); !ok || v != 0 {
				return false
			}
		}
		return true
	})
	if n := counter("zkgroup-claims"); n != int64(partitions) {
		t.Errorf("zkgroup-claims = %d, want %d", n, partitions)
	}
	if n, _ := gauge("zkgroup-partitions-owned"); n != int64(partitions) {
		t.Errorf("zkgroup-partitions-owned = %d, want %d", n, partitions)
	}
	if n := counter("zkgroup-commits"); n < int64(partitions) {
		t.Errorf("zkgroup-commits = %d, want at least one per partition", n)
	}
	if n := counter("zkgroup-rebalances"); n < 1 {
		t.Errorf("zkgroup-rebalances = %d, want at least the join", n)
	}
	for _, h := range []string{"zkgroup-claim-wait-ms", "zkgroup-commit-latency-ms", "zkgroup-rebalance-ms"} {
		hist, ok := get(h).(metrics.Histogram)
		if !ok || hist.Count() == 0 {
			t.Errorf("histogram %s missing or empty", h)
		} else if hist.Max() > 30_000 {
			t.Errorf("histogram %s max %d ms: implausible", h, hist.Max())
		}
	}
	if n := counter("zkgroup-offset-conflicts"); n != 0 {
		t.Errorf("zkgroup-offset-conflicts = %d, want 0", n)
	}
	if n, ok := gauge("zkgroup-session-connected"); !ok || n != 1 {
		t.Errorf("zkgroup-session-connected = %d (registered %v), want 1", n, ok)
	}
	if n, ok := gauge("zkgroup-session-fenced"); !ok || n != 0 {
		t.Errorf("zkgroup-session-fenced = %d (registered %v), want 0", n, ok)
	}
	if n := counter("zkgroup-session-expirations"); n != 0 {
		t.Errorf("zkgroup-session-expirations = %d, want 0", n)
	}
	if n := counter("zkgroup-errors-dropped"); n != 0 {
		t.Errorf("zkgroup-errors-dropped = %d, want 0 (Errors() is read)", n)
	}
	// The batch feed reads every partition here: sarama's histogram of
	// the messages per partition answer is the feed's.
	if h, ok := reg.Get("consumer-batch-size").(metrics.Histogram); !ok || h.Count() == 0 {
		t.Errorf("consumer-batch-size missing or empty (%T) after the batch feed read %d messages", reg.Get("consumer-batch-size"), l.distinct())
	}
	t.Logf("metrics: claims %d, commits %d, rebalances %d, commit latency p50 %.1f ms, claim wait max %d ms; produced %v",
		counter("zkgroup-claims"), counter("zkgroup-commits"), counter("zkgroup-rebalances"),
		get("zkgroup-commit-latency-ms").(metrics.Histogram).Percentile(0.5),
		get("zkgroup-claim-wait-ms").(metrics.Histogram).Max(), counts)
	closeGroup(t, cg)
	<-done
	if _, ok := lag(0); ok {
		t.Error("a lag gauge outlives the partition's ownership")
	}
	// Close waits for the session watch, which sets the gauge as the
	// session closes.
	if n, _ := gauge("zkgroup-session-connected"); n != 0 {
		t.Errorf("zkgroup-session-connected = %d as Close returned, want 0", n)
	}
}
