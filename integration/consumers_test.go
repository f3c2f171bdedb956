package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// The consumer harnesses: a member joins a group through either API and
// records what it is handed in a ledger.

// join joins group on topics through the test stack's ZooKeeper with cfg
// (nil: testConfig()), failing t on error.
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

// joinVia is join with an explicit ZooKeeper address (a tcpproxy's, say).
func joinVia(t testing.TB, zkAddr, group string, topics []string, cfg *consumergroup.Config) *consumergroup.ConsumerGroup {
	t.Helper()
	cg, err := consumergroup.JoinConsumerGroup(group, topics, []string{zkAddr}, cfg)
	if err != nil {
		t.Fatalf("join %s through %s: %v", group, zkAddr, err)
	}
	return cg
}

// readGroup reads cg's messages until Close closes both channels: each is
// recorded in l as delivered to consumer id, held for work (a stand-in for
// the application's processing time; 0 for none), then marked. onError
// sees every error. The returned channel closes when both are drained.
func readGroup(cg *consumergroup.ConsumerGroup, id int, l *ledger, work time.Duration, onError func(error)) (done <-chan struct{}) {
	return drainGroup(cg, func(m *sarama.ConsumerMessage) {
		l.add(delivery{consumer: id, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
		if work > 0 {
			time.Sleep(work)
		}
		_ = cg.CommitUpto(m)
	}, onError)
}

// drainGroup is the reading loop of every harness on the Messages() API:
// it hands each message to onMessage and each error to onError, in one
// goroutine, until Close closes both channels; the returned channel closes
// then. onMessage decides whether to mark.
func drainGroup(cg *consumergroup.ConsumerGroup, onMessage func(*sarama.ConsumerMessage), onError func(error)) (done <-chan struct{}) {
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
				onMessage(m)
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

// closeGroup closes cg, failing t on an error other than AlreadyClosing.
func closeGroup(t testing.TB, cg *consumergroup.ConsumerGroup) {
	t.Helper()
	if err := cg.Close(); err != nil && !errors.Is(err, consumergroup.AlreadyClosing) {
		t.Errorf("close: %v", err)
	}
}

// memberStarter starts one member of group, consuming topics through the
// ZooKeeper at zkAddr with cfg: it records each message in l as delivered
// to consumer id, holds it for work (0: none), then marks it. stop closes
// the member and waits until it has stopped reading; calling it again does
// nothing. Tests written against a memberStarter run through either API.
type memberStarter func(t testing.TB, zkAddr, group string, topics []string, cfg *consumergroup.Config,
	id int, l *ledger, work time.Duration) (stop func())

// messagesMember is a member through JoinConsumerGroup: one reader of
// Messages(), CommitUpto after each message.
func messagesMember(t testing.TB, zkAddr, group string, topics []string, cfg *consumergroup.Config,
	id int, l *ledger, work time.Duration) func() {
	t.Helper()
	cg := joinVia(t, zkAddr, group, topics, cfg)
	done := readGroup(cg, id, l, work, func(err error) { t.Logf("consumer %d: error: %v", id, err) })
	return sync.OnceFunc(func() {
		closeGroup(t, cg)
		<-done
	})
}

// handlerMember is a member through NewConsumerGroup and Consume, called
// in a loop as sarama's documentation shows: a ledgerHandler reads each
// claim in its own goroutine and marks every message with MarkMessage.
func handlerMember(t testing.TB, zkAddr, group string, topics []string, cfg *consumergroup.Config,
	id int, l *ledger, work time.Duration) func() {
	t.Helper()
	g, err := consumergroup.NewConsumerGroup(group, []string{zkAddr}, cfg)
	if err != nil {
		t.Fatalf("new consumer group %s: %v", group, err)
	}
	return runConsumeLoop(t, fmt.Sprintf("consumer %d", id), g, topics, &ledgerHandler{id: id, l: l, work: work})
}

// runConsumeLoop calls g.Consume with h in a loop, as sarama's
// documentation shows, and logs what g reports on Errors(), each line
// prefixed with name. stop cancels the loop, waits until Consume returned,
// closes g and waits until Errors() is closed; calling it again does
// nothing. It serves this module's HandlerGroup and sarama's own group.
func runConsumeLoop(t testing.TB, name string, g sarama.ConsumerGroup, topics []string, h sarama.ConsumerGroupHandler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, topics, h); err != nil && ctx.Err() == nil {
				t.Logf("%s: Consume: %v", name, err)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	errs := make(chan struct{})
	go func() {
		defer close(errs)
		for err := range g.Errors() {
			t.Logf("%s: error: %v", name, err)
		}
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-consumed
		if err := g.Close(); err != nil {
			t.Errorf("%s: close: %v", name, err)
		}
		<-errs
	})
}

// ledgerHandler records every message of every claim in a ledger and marks
// it after holding it for work. It has the shape of sarama's example
// handler: it returns when its claim's channel closes or the session ends.
type ledgerHandler struct {
	id   int
	l    *ledger
	work time.Duration
}

// Setup does nothing.
func (h *ledgerHandler) Setup(sarama.ConsumerGroupSession) error { return nil }

// Cleanup does nothing.
func (h *ledgerHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim records and marks every message of c until it closes or the
// session ends.
func (h *ledgerHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return nil
			}
			h.l.add(delivery{consumer: h.id, topic: m.Topic, partition: m.Partition, offset: m.Offset, at: time.Now()})
			if h.work > 0 {
				time.Sleep(h.work)
			}
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}
