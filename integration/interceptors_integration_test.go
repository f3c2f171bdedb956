package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// countingInterceptor counts OnConsume calls per partition and offset.
type countingInterceptor struct {
	mu   sync.Mutex
	seen map[[2]int64]int
}

func (c *countingInterceptor) OnConsume(m *sarama.ConsumerMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[[2]int64{int64(m.Partition), m.Offset}]++
}

// TestIntegrationInterceptorsOncePerMessage: the consumer's interceptors
// (Config.Consumer.Interceptors) run once for each message handed to the
// application, on the group's batch fetches and on sarama's partition
// consumer alike: never for a message not handed out, never twice.
func TestIntegrationInterceptorsOncePerMessage(t *testing.T) {
	testenv.Integration(t)
	for _, batches := range []bool{true, false} {
		t.Run(map[bool]string{true: "batches", false: "unbatched"}[batches], func(t *testing.T) {
			topic := newTopic(t, 2)
			counts := produce(t, topic, 60)
			ic := &countingInterceptor{seen: make(map[[2]int64]int)}
			cfg := testConfig()
			cfg.Fetch.Batches = batches
			cfg.Consumer.Interceptors = []sarama.ConsumerInterceptor{ic}
			l := newLedger()
			cg := join(t, testenv.UniqueName("icpt"), []string{topic}, cfg)
			done := consume(t, 0, cg, l)
			waitFor(t, 30*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
			closeGroup(t, cg)
			<-done
			ic.mu.Lock()
			defer ic.mu.Unlock()
			if len(ic.seen) != l.distinct() {
				t.Errorf("interceptors saw %d messages, the application %d", len(ic.seen), l.distinct())
			}
			for k, n := range ic.seen {
				if n != 1 {
					t.Errorf("partition %d offset %d: interceptors ran %d times", k[0], k[1], n)
				}
			}
		})
	}
}
