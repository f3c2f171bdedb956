package integration

import (
	"bytes"
	"context"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Consumer is a handler as sarama's examples/consumergroup program writes
// it, and as applications copy it: Setup closes ready, Cleanup does
// nothing, ConsumeClaim logs and marks each message and returns when its
// channel closes or the session ends. Nothing in it knows which group runs
// it.
type Consumer struct {
	ready chan bool
}

// Setup closes ready: the session is up.
func (consumer *Consumer) Setup(sarama.ConsumerGroupSession) error {
	close(consumer.ready)
	return nil
}

// Cleanup does nothing.
func (consumer *Consumer) Cleanup(sarama.ConsumerGroupSession) error {
	return nil
}

// ConsumeClaim logs and marks each message of the claim.
func (consumer *Consumer) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case message, ok := <-claim.Messages():
			if !ok {
				log.Printf("message channel was closed")
				return nil
			}
			log.Printf("Message claimed: value = %s, timestamp = %v, topic = %s", string(message.Value), message.Timestamp, message.Topic)
			session.MarkMessage(message, "")
		case <-session.Context().Done():
			return nil
		}
	}
}

// exampleMember runs Consumer on client with the example program's loop:
// Consume again after each session, a new ready channel each time. It
// returns once the first session is set up; stop cancels and waits.
func exampleMember(t *testing.T, client sarama.ConsumerGroup, topics []string) (stop func()) {
	t.Helper()
	consumer := Consumer{ready: make(chan bool)}
	ready := consumer.ready
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if err := client.Consume(ctx, topics, &consumer); err != nil {
				t.Errorf("Error from consumer: %v", err)
				return
			}
			if ctx.Err() != nil {
				return
			}
			consumer.ready = make(chan bool)
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer was not set up within 30s")
	}
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		if err := client.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for the log package's writes and the
// test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// captureLog sends the log package's output to a buffer for the test.
func captureLog(t *testing.T) *syncBuffer {
	buf := &syncBuffer{}
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(buf)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })
	return buf
}

// TestIntegrationHandlerSaramaExample runs the handler of sarama's example
// program, with the example's Consume loop, unchanged on both groups, as a
// sarama.ConsumerGroup: on NewConsumerGroup (two members, the second
// joining while the first runs) and on sarama.NewConsumerGroup against the
// same broker. Each must consume every message and commit its offset. On
// ours the second member's arrival must close the moved claims' channels
// (the handler logs it) while the first member's session, and its Setup,
// carry on: Setup closes ready, so a second Setup in the same Consume
// call would panic.
func TestIntegrationHandlerSaramaExample(t *testing.T) {
	testenv.Integration(t)
	const partitions, n = 4, 400
	topic := newTopic(t, partitions)
	out := captureLog(t)
	claimed := "topic = " + topic
	produced := 0 // on the topic so far

	t.Run("zookeeper group", func(t *testing.T) {
		group := testenv.UniqueName("example")
		cfg := testConfig()
		newGroup := func() sarama.ConsumerGroup {
			g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		before := out.count(claimed)
		stop1 := exampleMember(t, newGroup(), []string{topic})
		defer stop1()
		counts := produce(t, topic, n)
		produced += n
		waitFor(t, 60*time.Second, "the first batch", func() bool { return out.count(claimed)-before >= n })
		closedBefore := out.count("message channel was closed")
		stop2 := exampleMember(t, newGroup(), []string{topic})
		defer stop2()
		waitFor(t, 30*time.Second, "the second member's arrival to close the first one's moved claims", func() bool {
			return out.count("message channel was closed")-closedBefore >= partitions/2
		})
		for p, c := range produce(t, topic, n) {
			counts[p] += c
		}
		produced += n
		waitFor(t, 60*time.Second, "the second batch", func() bool { return out.count(claimed)-before >= 2*n })
		state := newGroupState(t, group)
		waitFor(t, 30*time.Second, "every offset committed", func() bool {
			offs, err := state.offsets(topic, partitions)
			if err != nil {
				return false
			}
			for p, c := range counts {
				if offs[p] != c {
					return false
				}
			}
			return true
		})
		stop1()
		stop2()
		if got := out.count(claimed) - before; got != 2*n {
			t.Errorf("%d messages logged, want %d (no duplicates when every message is marked)", got, 2*n)
		}
		// At the end the session's context ends first, and the handler
		// returns through it: only the moved claims saw their channel close.
		if got := out.count("message channel was closed") - closedBefore; got != partitions/2 {
			t.Errorf("%d claims ended by their channel closing, want the %d moved", got, partitions/2)
		}
	})

	t.Run("sarama group", func(t *testing.T) {
		group := testenv.UniqueName("example")
		cfg := saramaConfig()
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		client, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), group, cfg)
		if err != nil {
			t.Fatal(err)
		}
		before := out.count(claimed)
		stop := exampleMember(t, client, []string{topic})
		defer stop()
		if produced == 0 {
			produced = n
			produce(t, topic, n)
		}
		waitFor(t, 60*time.Second, "every message", func() bool { return out.count(claimed)-before >= produced })
		stop()

		admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		parts := allPartitions(partitions)
		res, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: parts})
		if err != nil {
			t.Fatal(err)
		}
		var committed int64
		for _, p := range parts {
			if b := res.GetBlock(topic, p); b != nil && b.Offset > 0 {
				committed += b.Offset
			}
		}
		if committed != int64(produced) {
			t.Errorf("sarama's group committed offsets summing to %d, want %d", committed, produced)
		}
	})
}
