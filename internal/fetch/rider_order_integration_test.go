package fetch

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// The broker fills a request's partitions in request order, and riders
// must come after every counted want (docs/batch-feed.md, "Half rounds"),
// whatever their topics: grouped by topic alone, a rider of topic A went
// out before a counted want of topic B, took what the response's limit
// had left, and the counted want came back empty, starved by a rider.
func TestIntegrationRidersNeverStarveCountedWants(t *testing.T) {
	testenv.Integration(t)
	topicA, topicB := testenv.UniqueName("ride-a"), testenv.UniqueName("ride-b")
	testenv.CreateTopic(t, topicA, 2)
	testenv.CreateTopic(t, topicB, 1)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.Producer.MaxMessageBytes = 1 << 20
	conf.Consumer.Fetch.MaxBytes = 2 << 20 // a busy round counts 1 MiB
	client, producer := stackClient(t, conf)
	value := sarama.StringEncoder(strings.Repeat("x", 10<<10)) // one batch of ~10 KiB per message
	for _, p := range []struct {
		topic     string
		partition int32
		n         int
	}{{topicA, 0, 40}, {topicA, 1, 120}, {topicB, 0, 10}} {
		produce(t, producer, p.topic, p.partition, p.n, value)
	}

	cfg := &Config{Config: conf}
	cfg.Batches = true
	e := &env{config: cfg, client: client, log: slog.New(slog.DiscardHandler)}
	busy, idle := newFetchers(e)
	defer busy.closeConns()
	defer idle.closeConns()
	want := func(topic string, partition int32, size int32, first bool) *fetchWant {
		leader, epoch, err := leaderAndEpoch(client, topic, partition)
		if err != nil {
			t.Fatal(err)
		}
		busy.leaders[leader.ID()] = leader
		return &fetchWant{ctx: context.Background(), topic: topic, partition: partition, epoch: epoch,
			size: size, limit: 1 << 20, first: first, done: make(chan fetchResult, 1)}
	}
	// Counted: A/0 and B/0, 512 KiB each (the round's 1 MiB). Riding: A/1's
	// first fetch of 1 MiB.
	a0, b0, a1 := want(topicA, 0, 512<<10, false), want(topicB, 0, 512<<10, false), want(topicA, 1, 1<<20, true)
	leader, _, _ := leaderAndEpoch(client, topicB, 0)
	id := leader.ID()
	busy.mu.Lock()
	busy.pending[id] = []*fetchWant{a0, b0, a1}
	busy.inFlight[id] = true
	busy.mu.Unlock()
	done := make(chan struct{})
	go func() { defer close(done); runUntilAnswered(busy, id) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("rounds did not end")
	}
	for _, w := range []*fetchWant{a0, b0, a1} {
		r := <-w.done
		t.Logf("%s/%d: %d messages, err %v, starved %d", w.topic, w.partition, r.messages(), r.err, w.starved)
	}
	if b0.starved != 0 || a0.starved != 0 {
		t.Errorf("a counted want was starved (A/0 %d times, B/0 %d times) in a round with a rider: "+
			"the rider went out before it and took the response's room", a0.starved, b0.starved)
	}
}
