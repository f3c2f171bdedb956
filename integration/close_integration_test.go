package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationCloseWithoutReaders: Close returns within ProcessingTimeout
// plus a margin although nobody reads Messages() or Errors(), and commits
// what was marked.
func TestIntegrationCloseWithoutReaders(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 4)
	produce(t, topic, 400)
	group := testenv.UniqueName("g")
	cfg := testConfig()
	cfg.Offsets.ProcessingTimeout = 2 * time.Second
	cfg.ChannelBufferSize = 1 // Errors() fills at once

	cg := join(t, group, []string{topic}, cfg)
	// Take one message, mark it, then stop reading.
	var marked = map[int32]int64{}
	for len(marked) == 0 {
		select {
		case m := <-cg.Messages():
			_ = cg.CommitUpto(m)
			marked[m.Partition] = m.Offset
		case <-time.After(30 * time.Second):
			t.Fatal("no message")
		}
	}
	time.Sleep(500 * time.Millisecond) // workers now block handing over the next messages

	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cg.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(cfg.Offsets.ProcessingTimeout + 15*time.Second):
		t.Fatalf("Close did not return within ProcessingTimeout (%v) + 15s", cfg.Offsets.ProcessingTimeout)
	}
	t.Logf("Close without readers took %v (ProcessingTimeout %v)", time.Since(start), cfg.Offsets.ProcessingTimeout)

	kz := zkClient(t)
	for p, o := range marked {
		got, err := kz.Consumergroup(group).FetchOffset(topic, p)
		if err != nil || got != o+1 {
			t.Errorf("%s/%d: stored offset %d (%v), want %d (the mark was committed on Close)", topic, p, got, err, o+1)
		}
	}
	if _, ok := <-cg.Messages(); ok {
		// A message handed over before Close is fine; the channel must then close.
		for range cg.Messages() {
		}
	}
}
