package integration

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// newTopic creates a topic with a unique name and the given partition count,
// waits until every partition has a leader, and deletes it after the test.
func newTopic(t testing.TB, partitions int32) string {
	t.Helper()
	name := testenv.UniqueName("it")
	testenv.CreateTopic(t, name, partitions)
	return name
}

// kraftRefresh is Kafka.RefreshInterval in the tests on a KRaft stack:
// short, so topology changes show up quickly.
const kraftRefresh = time.Second

// testConfig is the group config the integration tests use: short timeouts
// so rebalances and closes are quick, frequent commits. On a KRaft stack
// (testenv.KRaft) it reads the cluster's metadata from Kafka, every
// kraftRefresh, since ZooKeeper has none.
func testConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	if testenv.KRaft() {
		cfg.Kafka.Brokers = testenv.KafkaAddrs()
		cfg.Kafka.RefreshInterval = kraftRefresh
	}
	if os.Getenv("ZKGROUP_DEBUG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// zkClient opens a kazoo client of the test stack's ZooKeeper, closed when
// the test ends.
func zkClient(t testing.TB) *kazoo.Kazoo {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("connect to ZooKeeper at %s: %v", testenv.ZKAddr(), err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

func join(t testing.TB, group string, topics []string, cfg *consumergroup.Config) *consumergroup.ConsumerGroup {
	t.Helper()
	if cfg == nil {
		cfg = testConfig()
	}
	cg, err := consumergroup.JoinConsumerGroup(group, topics, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatalf("join %s: %v", group, err)
	}
	return cg
}

// delivery is one message handed to one consumer.
type delivery struct {
	consumer  int
	topic     string
	partition int32
	offset    int64
	at        time.Time
}

// ledger records every delivery of every consumer of a test.
type ledger struct {
	mu   sync.Mutex
	all  []delivery
	seen map[string]int // "topic/partition/offset" -> times delivered
}

func newLedger() *ledger { return &ledger{seen: make(map[string]int)} }

func (l *ledger) add(d delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
	l.seen[fmt.Sprintf("%s/%d/%d", d.topic, d.partition, d.offset)]++
}

func (l *ledger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

func (l *ledger) duplicates() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.seen {
		n += c - 1
	}
	return n
}

// missing counts the produced messages never delivered.
func (l *ledger) missing(topic string, counts map[int32]int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p, c := range counts {
		for o := int64(0); o < c; o++ {
			if l.seen[fmt.Sprintf("%s/%d/%d", topic, p, o)] == 0 {
				n++
			}
		}
	}
	return n
}

// readGroup reads cg's messages until Close closes both channels: each is
// recorded in l as delivered to consumer id, held for work (a stand-in for
// the application's processing time; 0 for none), then marked. onError
// sees every error. The returned channel closes when both are drained.
func readGroup(cg *consumergroup.ConsumerGroup, id int, l *ledger, work time.Duration, onError func(error)) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		msgs, errs := cg.Messages(), cg.Errors()
		for msgs != nil || errs != nil {
			select {
			case m, ok := <-msgs:
				if !ok {
					msgs = nil
					continue
				}
				l.add(delivery{consumer: id, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
				if work > 0 {
					time.Sleep(work)
				}
				_ = cg.CommitUpto(m)
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				onError(err)
			}
		}
	}()
	return ch
}

// consume is readGroup without processing time, logging errors.
func consume(t testing.TB, id int, cg *consumergroup.ConsumerGroup, l *ledger) (done <-chan struct{}) {
	return readGroup(cg, id, l, 0, func(err error) { t.Logf("consumer %d: error: %v", id, err) })
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func closeGroup(t testing.TB, cg *consumergroup.ConsumerGroup) {
	t.Helper()
	if err := cg.Close(); err != nil && !errors.Is(err, consumergroup.AlreadyClosing) {
		t.Errorf("close: %v", err)
	}
}
