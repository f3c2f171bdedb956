package integration

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationBrokersConnCount counts the TCP connections this process
// holds to each broker while our group reads a topic spread over every
// broker, and while sarama's group reads it: ours may hold one more per
// broker than sarama's in all (the batch feed's own connection, shared by
// its long polls and its fetches answered at once), not two. As first built it
// held two more: an own connection for each. It
// runs on the default stack and on brokers-tests.sh's three brokers; the
// bench's `throughput -conns` adds franz-go's group and the count after the
// own connection's idle close (docs/batch-feed.md, "Connections").
func TestIntegrationBrokersConnCount(t *testing.T) {
	testenv.Integration(t)
	const n = 60_000
	topic := newTopic(t, 6)
	produce(t, topic, n)

	ours := countConns(t, n, func() (func() int64, func()) {
		var seen atomic.Int64
		cg := join(t, testenv.UniqueName("conns-ours"), []string{topic}, nil)
		done := drainGroup(cg, func(m *sarama.ConsumerMessage) {
			_ = cg.CommitUpto(m)
			seen.Add(1)
		}, func(err error) { t.Logf("ours: error: %v", err) })
		return seen.Load, func() {
			closeGroup(t, cg)
			<-done
		}
	})
	theirs := countConns(t, n, func() (func() int64, func()) {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V2_8_0_0
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		cfg.Consumer.MaxWaitTime = testConfig().Consumer.MaxWaitTime
		g, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), testenv.UniqueName("conns-sarama"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := &countingHandler{done: func() {}}
		h.n.Store(n)
		stop := runConsumeLoop(t, "sarama", g, []string{topic}, h)
		return h.seen.Load, stop
	})

	var table strings.Builder
	fmt.Fprintf(&table, "\n| broker | ours busy | ours idle | sarama busy | sarama idle |\n|---|---|---|---|---|\n")
	for _, b := range testenv.KafkaAddrs() {
		fmt.Fprintf(&table, "| %s | %d | %d | %d | %d |\n", b, ours.busy[b], ours.idle[b], theirs.busy[b], theirs.idle[b])
	}
	t.Log(table.String())
	// Each client also keeps the connection to the seed broker it asked
	// for metadata first, picked at random among the addresses (and
	// sarama's group one to its coordinator), so one broker may hold one
	// more of either group's: per broker ours may hold two more, in all
	// one more per broker.
	brokers := len(testenv.KafkaAddrs())
	var oursBusy, oursIdle, theirsBusy, theirsIdle int
	for _, b := range testenv.KafkaAddrs() {
		oursBusy, oursIdle = oursBusy+ours.busy[b], oursIdle+ours.idle[b]
		theirsBusy, theirsIdle = theirsBusy+theirs.busy[b], theirsIdle+theirs.idle[b]
		if ours.busy[b] > theirs.busy[b]+2 || ours.idle[b] > theirs.idle[b]+2 {
			t.Errorf("broker %s: our group held %d connections busy, %d idle; sarama's %d and %d: want at most two more", b,
				ours.busy[b], ours.idle[b], theirs.busy[b], theirs.idle[b])
		}
	}
	if oursBusy > theirsBusy+brokers || oursIdle > theirsIdle+brokers {
		t.Errorf("our group held %d connections busy, %d idle to %d brokers; sarama's %d and %d: want at most one more per broker",
			oursBusy, oursIdle, brokers, theirsBusy, theirsIdle)
	}
}

// groupConns are a group's connections by broker address: the most seen
// while it read, and 3 s after it read the last message.
type groupConns struct{ busy, idle map[string]int }

// countConns starts a group (start returns how many messages it read, and
// its stop), counts its connections to each broker (beyond those open
// before) until it read n messages, and 3 s after, then stops it.
func countConns(t *testing.T, n int64, start func() (seen func() int64, stop func())) groupConns {
	t.Helper()
	before := brokerConns(t, nil)
	seen, stop := start()
	defer stop()
	busy := make(map[string]int)
	deadline := time.Now().Add(2 * time.Minute)
	for seen() < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d messages in 2 minutes", seen(), n)
		}
		time.Sleep(20 * time.Millisecond)
		for b, c := range brokerConns(t, before) {
			busy[b] = max(busy[b], c)
		}
	}
	time.Sleep(3 * time.Second) // every partition long-polls
	return groupConns{busy: busy, idle: brokerConns(t, before)}
}

// brokerConns returns this process's established connections to each
// broker of the stack, less those in before.
func brokerConns(t *testing.T, before map[string]int) map[string]int {
	t.Helper()
	all, err := testenv.EstablishedConns()
	if err != nil {
		t.Skipf("no connection count here: %v", err)
	}
	out := make(map[string]int)
	for _, b := range testenv.KafkaAddrs() {
		out[b] = all[b] - before[b]
	}
	return out
}
