package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
)

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
	ctx, cancel := context.WithCancel(context.Background())
	h := &ledgerHandler{id: id, l: l, work: work}
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, topics, h); err != nil {
				t.Logf("consumer %d: Consume: %v", id, err)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	errs := make(chan struct{})
	go func() {
		defer close(errs)
		for err := range g.Errors() {
			t.Logf("consumer %d: error: %v", id, err)
		}
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-consumed
		if err := g.Close(); err != nil {
			t.Errorf("consumer %d: close: %v", id, err)
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

func (h *ledgerHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *ledgerHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
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
