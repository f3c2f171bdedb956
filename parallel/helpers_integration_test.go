package parallel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// groupConfig is the consumergroup config of these tests: from the
// oldest offset, quick commits, a drain longer than parallel's.
func groupConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 10 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	if testenv.KRaft() {
		cfg.Kafka.Brokers = testenv.KafkaAddrs()
	}
	return cfg
}

// produced is a message the test sent: its key and its sequence number
// within the key.
type produced struct {
	key string
	seq int
}

// produceKeyed sends n messages with keys k0..k(keys-1) round-robin (the
// hash partitioner keeps a key on one partition), valued "key:seq", and
// returns them by partition and offset.
func produceKeyed(t testing.TB, topic string, n, keys int) map[int32]map[int64]produced {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), cfg)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, n)
	seqs := map[string]int{}
	for i := range msgs {
		key := fmt.Sprint("k", i%keys)
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.StringEncoder(fmt.Sprintf("%s:%d", key, seqs[key]))}
		seqs[key]++
	}
	for start := 0; start < n; start += 500 {
		if err := p.SendMessages(msgs[start:min(start+500, n)]); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	out := map[int32]map[int64]produced{}
	for _, m := range msgs {
		if out[m.Partition] == nil {
			out[m.Partition] = map[int64]produced{}
		}
		k, _ := m.Key.Encode()
		v, _ := m.Value.Encode()
		out[m.Partition][m.Offset] = produced{string(k), seqOf(v)}
	}
	return out
}

// seqOf parses the sequence number of a "key:seq" value.
func seqOf(value []byte) int {
	_, s, _ := strings.Cut(string(value), ":")
	n, _ := strconv.Atoi(s)
	return n
}

// run is one message processed by fn: who, what, when.
type run struct {
	member        int
	partition     int32
	offset        int64
	key           string
	seq           int
	start, finish time.Time
}

// ledger records every message fn processed.
type ledger struct {
	mu   sync.Mutex
	runs []run
	done map[[2]int64]bool // partition, offset
}

func newLedger() *ledger { return &ledger{done: map[[2]int64]bool{}} }

// fn returns the processing function of member: it sleeps a
// pseudo-random 0-max and records the run.
func (l *ledger) fn(member int, maxSleep time.Duration) func(context.Context, *sarama.ConsumerMessage) error {
	return func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		start := time.Now()
		select {
		case <-time.After(time.Duration(rand.Int64N(int64(maxSleep) + 1))):
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.runs = append(l.runs, run{member, msg.Partition, msg.Offset, string(msg.Key), seqOf(msg.Value), start, time.Now()})
		l.done[[2]int64{int64(msg.Partition), msg.Offset}] = true
		return nil
	}
}

// distinct is the number of distinct messages processed.
func (l *ledger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.done)
}

// check fails t for every message produced and never processed, for
// every key whose messages fn started out of order (a later one before an
// earlier one had run: a jump forward; going back is a redelivery, which
// at-least-once allows), and for two members processing one partition at
// once; it logs the duplicates and each partition's hand-overs.
func (l *ledger) check(t *testing.T, want map[int32]map[int64]produced) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	lost := 0
	for p, offs := range want {
		for o := range offs {
			if !l.done[[2]int64{int64(p), o}] {
				lost++
			}
		}
	}
	runs := slices.Clone(l.runs)
	slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
	violations, overlaps, dups := orderViolations(runs), 0, len(runs)-len(l.done)
	lastFinish := map[int32]map[int]time.Time{}
	for _, r := range runs {
		if lastFinish[r.partition] == nil {
			lastFinish[r.partition] = map[int]time.Time{}
		}
		for m, f := range lastFinish[r.partition] {
			if m != r.member && f.After(r.start) {
				overlaps++
				t.Errorf("partition %d: member %d started %d at %s while member %d worked on it until %s",
					r.partition, r.member, r.offset, r.start.Format("15:04:05.000"), m, f.Format("15:04:05.000"))
			}
		}
		if f := lastFinish[r.partition][r.member]; r.finish.After(f) {
			lastFinish[r.partition][r.member] = r.finish
		}
	}
	t.Logf("%d messages produced, %d runs, %d duplicates, %d lost, %d per-key order violations, %d cross-member overlaps",
		len(l.done)+lost, len(runs), dups, lost, violations, overlaps)
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
	}
	if violations > 0 {
		t.Errorf("%d per-key order violations", violations)
	}
}

// orderViolations counts, in runs sorted by start, the runs of a key
// that started before an earlier one of the key had started.
func orderViolations(runs []run) int {
	violations := 0
	next := map[string]int{} // per key, the highest seq started + 1
	for _, r := range runs {
		if r.seq > next[r.key] {
			violations++
		}
		next[r.key] = max(next[r.key], r.seq+1)
	}
	return violations
}

// orderViolations is the package function on the runs so far.
func (l *ledger) orderViolations() int {
	l.mu.Lock()
	runs := slices.Clone(l.runs)
	l.mu.Unlock()
	slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
	return orderViolations(runs)
}

// handovers logs, for each partition that changed member, the last finish
// by the member before and the first start by the member after, and
// returns how many there were.
func (l *ledger) handovers(t *testing.T) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := slices.Clone(l.runs)
	slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
	n := 0
	owner := map[int32]int{}
	lastFinish := map[int32]time.Time{}
	for _, r := range runs {
		if o, ok := owner[r.partition]; ok && o != r.member {
			n++
			t.Logf("partition %d: member %d's last finish %s, member %d's first start %s (%v later)",
				r.partition, o, lastFinish[r.partition].Format("15:04:05.000"), r.member, r.start.Format("15:04:05.000"),
				r.start.Sub(lastFinish[r.partition]).Round(time.Millisecond))
		}
		if owner[r.partition] != r.member || r.finish.After(lastFinish[r.partition]) {
			lastFinish[r.partition] = r.finish
		}
		owner[r.partition] = r.member
	}
	return n
}

// consumeLoop runs g.Consume with h until stop is called, as the usual
// loop around Consume does, logging the group's errors; errs, when not
// nil, gets those it has room for. stop may be called more than once.
func consumeLoop(t testing.TB, g sarama.ConsumerGroup, topic string, h sarama.ConsumerGroupHandler, errs chan<- error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for err := range g.Errors() {
			t.Logf("group: %v", err)
			if errs != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil {
				t.Logf("consume: %v", err)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := g.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			wg.Wait()
		})
	}
}

// waitUntil fails t unless cond holds within timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
