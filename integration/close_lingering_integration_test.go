package integration

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv/leaks"
)

// TestIntegrationNothingOutlivesClose: with Fetch.Batches, an idle
// partition long-polls over the feed's own connection; Close shuts that
// connection's socket under the long poll and waits for the fetcher's
// rounds, so nothing of the fetcher outlives Close, whatever
// Consumer.MaxWaitTime (a caller checking for leaked goroutines right after
// Close would find them otherwise: as first built, the round goroutine and
// the connection's sarama goroutines outlived Close by up to MaxWaitTime,
// which the other integration tests' 100 ms hides). With Fetch.Batches
// false, sarama's partition consumer waits for its fetch in flight inside
// Close, and nothing is left either (the control case).
func TestIntegrationNothingOutlivesClose(t *testing.T) {
	for _, batches := range []bool{false, true} {
		name := "sarama"
		if batches {
			name = "batches"
		}
		t.Run(name, func(t *testing.T) {
			topic := newTopic(t, 1)
			produce(t, topic, 1)
			before := goleak.IgnoreCurrent()
			cfg := testConfig()
			cfg.Fetch.Batches = batches
			cfg.Consumer.MaxWaitTime = 2 * time.Second // sarama's default is 500 ms; any value above goleak's retries shows it
			cg := join(t, "linger-"+topic, []string{topic}, cfg)
			select {
			case m := <-cg.Messages():
				_ = cg.CommitUpto(m)
			case <-time.After(30 * time.Second):
				_ = cg.Close()
				t.Fatal("no message in 30 s")
			}
			time.Sleep(500 * time.Millisecond) // the partition is idle: its long poll is in flight
			began := time.Now()
			if err := cg.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("Close took %v", time.Since(began).Round(time.Millisecond))
			if err := goleak.Find(append(leaks.Known(), before)...); err != nil {
				t.Errorf("goroutines outlive Close: %v", err)
				time.Sleep(cfg.Consumer.MaxWaitTime + time.Second) // let them end before the next case
			}
		})
	}
}
