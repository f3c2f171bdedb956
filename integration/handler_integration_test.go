package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationHandlerCleanRebalance is TestIntegrationCleanRebalance
// through Consume and a handler that marks every message: a second member
// joining moves half the partitions with 0 duplicates and 0 lost, and the
// partitions the first member keeps keep flowing. Its claims are processed
// in parallel, one goroutine each, so the first member holds each message
// 20 ms to keep a backlog in every partition when the second joins.
func TestIntegrationHandlerCleanRebalance(t *testing.T) {
	testenv.Integration(t)
	runCleanRebalance(t, handlerMember, 20*time.Millisecond, testConfig)
}

// TestIntegrationHandlerZombie is TestIntegrationZombie through Consume: a
// member cut off from ZooKeeper past its session timeout stops delivering
// on every claim before another member can take its partitions, commits
// nothing after, never delivers a partition while the other does, and no
// committed offset goes backwards; reconnected, it gets claims again in
// the same session.
func TestIntegrationHandlerZombie(t *testing.T) {
	testenv.Integration(t)
	runZombie(t, testenv.ZKAddr(), testConfig, handlerMember)
}

// readOneHandler reads and marks one message of its claim, then returns
// once the session ends, as sarama's example does when its context ends
// first: what its claim's buffer holds stays unread.
type readOneHandler struct{ got chan struct{} }

func (h *readOneHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *readOneHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *readOneHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	m, ok := <-c.Messages()
	if !ok {
		return nil
	}
	s.MarkMessage(m, "")
	close(h.got)
	<-s.Context().Done()
	return nil
}

// TestIntegrationHandlerReturnedOnSessionEnd: a session that ends while
// its handler has left messages unread in a claim's buffer ends without
// waiting Offsets.ProcessingTimeout for their marks (nobody can make them),
// reports no drain timeout, and commits the offset after the one message
// marked.
func TestIntegrationHandlerReturnedOnSessionEnd(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produce(t, topic, 200)
	cfg := testConfig()
	cfg.Offsets.ProcessingTimeout = 30 * time.Second
	group := testenv.UniqueName("returned")
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &readOneHandler{got: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() { consumed <- g.Consume(ctx, []string{topic}, h) }()
	select {
	case <-h.got:
	case <-time.After(30 * time.Second):
		t.Fatal("no message within 30s")
	}
	cancel()
	if err := <-consumed; err != nil {
		t.Errorf("Consume: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for err := range g.Errors() {
		if strings.Contains(err.Error(), "gave up waiting") {
			t.Errorf("the session's end waited for marks of messages nobody read: %v", err)
		}
	}
	kz := zkClient(t)
	if got, err := kz.Consumergroup(group).FetchOffset(topic, 0); err != nil || got != 1 {
		t.Errorf("stored offset %d (%v), want 1 (one message marked)", got, err)
	}
}
