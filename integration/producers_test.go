package integration

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// The producers of the integration tests: one config, one way to open a
// producer, synchronous helpers for a fixed number of messages and one
// background producer for tests that consume while messages arrive.

// saramaConfig is the producer config of every test: idempotent, acked by
// all replicas, round-robin over the partitions.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	// Idempotent: a send retried after a timeout on a loaded machine must
	// not write its messages twice, or a partition holds more messages than
	// produce counted, and "every message delivered" is judged wrong.
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	return cfg
}

// openProducer opens a sync producer to the test stack with saramaConfig
// changed by configure (nil: unchanged). The caller closes it.
func openProducer(configure func(*sarama.Config)) (sarama.SyncProducer, error) {
	cfg := saramaConfig()
	if configure != nil {
		configure(cfg)
	}
	return sarama.NewSyncProducer(testenv.KafkaAddrs(), cfg)
}

// newProducer is openProducer failing t on error. The caller closes it.
func newProducer(t testing.TB, configure func(*sarama.Config)) sarama.SyncProducer {
	t.Helper()
	p, err := openProducer(configure)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	return p
}

// manualPartitions makes a producer send each message to its Partition.
func manualPartitions(cfg *sarama.Config) { cfg.Producer.Partitioner = sarama.NewManualPartitioner }

// produceBatch is the number of messages the synchronous helpers send in
// one request.
const produceBatch = 500

// sendAll sends msgs produceBatch at a time, failing t on any error.
func sendAll(t testing.TB, p sarama.SyncProducer, msgs []*sarama.ProducerMessage) {
	t.Helper()
	for start := 0; start < len(msgs); start += produceBatch {
		batch := msgs[start:min(start+produceBatch, len(msgs))]
		if err := p.SendMessages(batch); err != nil {
			var pe sarama.ProducerErrors
			if errors.As(err, &pe) && len(pe) > 0 {
				t.Fatalf("produce to %s: %v (first: partition %d: %v)", batch[0].Topic, err, pe[0].Msg.Partition, pe[0].Err)
			}
			t.Fatalf("produce to %s: %v", batch[0].Topic, err)
		}
	}
}

// produce sends n messages round-robin over the topic's partitions and
// returns how many went to each partition.
func produce(t testing.TB, topic string, n int) map[int32]int64 {
	t.Helper()
	p := newProducer(t, nil)
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprintf("message %d", i))}
	}
	sendAll(t, p, msgs)
	counts := make(map[int32]int64)
	for _, m := range msgs {
		counts[m.Partition]++
	}
	return counts
}

// produceTo sends n[p] messages to each partition p of topic and returns
// the counts.
func produceTo(t testing.TB, topic string, n map[int32]int) map[int32]int64 {
	t.Helper()
	p := newProducer(t, manualPartitions)
	defer p.Close()
	counts := make(map[int32]int64)
	for part, c := range n {
		msgs := make([]*sarama.ProducerMessage, c)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.StringEncoder(fmt.Sprintf("message %d", i))}
		}
		sendAll(t, p, msgs)
		counts[part] = int64(c)
	}
	return counts
}

// produceOneTo sends one message to topic/partition, retrying for up to 30
// seconds with a new producer (whose metadata is fresh) while the partition
// is unknown to it, as it is just after partitions were added.
func produceOneTo(t testing.TB, topic string, partition int32) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := sendOneTo(topic, partition)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to %s/%d: %v", topic, partition, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sendOneTo sends one message to topic/partition through a new producer.
func sendOneTo(topic string, partition int32) error {
	p, err := openProducer(manualPartitions)
	if err != nil {
		return err
	}
	defer p.Close()
	_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: partition, Value: sarama.StringEncoder("x")})
	return err
}

// streamProducer produces to a topic in the background: batch messages
// (round-robin over the partitions) every period, until stop is called or
// limit messages were sent. It records, per partition, how many messages
// were acknowledged and one past the highest acknowledged offset.
type streamProducer struct {
	throughFaults bool // keep producing after a failed send
	stopC         chan struct{}
	done          chan struct{}
	stopOnce      sync.Once

	mu     sync.Mutex
	counts map[int32]int64
	next   map[int32]int64
	sent   int
	failed int
	err    error
}

// startProducer starts a streamProducer that stops at the first failed
// send; stop then returns the error. It stops when the test ends.
func startProducer(t testing.TB, topic string, batch int, period time.Duration, limit int) *streamProducer {
	t.Helper()
	return newStreamProducer(t, topic, batch, period, limit, false)
}

// startProducerThroughFaults starts a streamProducer that counts a failed
// send (failedSends) and goes on, for tests that break the stack while it
// runs; the offsets every partition must hold are then nextOffsets. It
// stops when the test ends.
func startProducerThroughFaults(t testing.TB, topic string, batch int, period time.Duration, limit int) *streamProducer {
	t.Helper()
	return newStreamProducer(t, topic, batch, period, limit, true)
}

func newStreamProducer(t testing.TB, topic string, batch int, period time.Duration, limit int, throughFaults bool) *streamProducer {
	t.Helper()
	p := newProducer(t, nil)
	sp := &streamProducer{
		throughFaults: throughFaults, stopC: make(chan struct{}), done: make(chan struct{}),
		counts: make(map[int32]int64), next: make(map[int32]int64),
	}
	go func() {
		defer close(sp.done)
		defer p.Close()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; i < limit; {
			var msgs []*sarama.ProducerMessage
			for ; len(msgs) < batch && i < limit; i++ {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprintf("message %d", i))})
			}
			if !sp.record(topic, msgs, p.SendMessages(msgs)) {
				return
			}
			select {
			case <-sp.stopC:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { _, _ = sp.stop() })
	return sp
}

// record counts the acknowledged messages of one send and reports whether
// to go on.
func (sp *streamProducer) record(topic string, msgs []*sarama.ProducerMessage, err error) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	failed := make(map[*sarama.ProducerMessage]bool)
	var pes sarama.ProducerErrors
	switch {
	case err == nil:
	case !sp.throughFaults:
		sp.err = fmt.Errorf("produce to %s: %w", topic, err)
		return false
	case errors.As(err, &pes):
		for _, pe := range pes {
			failed[pe.Msg] = true
		}
		sp.failed += len(pes)
	default:
		sp.failed += len(msgs)
		return true
	}
	for _, m := range msgs {
		if failed[m] {
			continue
		}
		sp.counts[m.Partition]++
		sp.next[m.Partition] = max(sp.next[m.Partition], m.Offset+1)
		sp.sent++
	}
	return true
}

// Sent returns how many messages were acknowledged so far.
func (sp *streamProducer) Sent() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.sent
}

// failedSends returns how many messages were not acknowledged.
func (sp *streamProducer) failedSends() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.failed
}

// stop ends production and returns what each partition received; an error
// means some batch was not acknowledged (and is not counted).
func (sp *streamProducer) stop() (map[int32]int64, error) {
	sp.stopOnce.Do(func() { close(sp.stopC) })
	<-sp.done
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return maps.Clone(sp.counts), sp.err
}

// nextOffsets stops production and returns, per partition, one past the
// highest acknowledged offset: every offset below it is in the log and must
// be delivered, whatever sends failed.
func (sp *streamProducer) nextOffsets() map[int32]int64 {
	_, _ = sp.stop()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return maps.Clone(sp.next)
}
