package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Consume of a static member whose id another live instance holds stops
// waiting for the id when its context ends, as Consume promises ("until
// ctx is done"), rather than after the whole wait for the id: it returns
// the context's error.
func TestIntegrationStaticConsumeContextEndsTheWaitForTheID(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	group := testenv.UniqueName("static-ctx")
	first := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	done := consume(t, 0, first, newLedger())
	defer func() { closeGroup(t, first); <-done }()

	cfg := staticConfig("s0", 10*time.Second)
	cfg.Zookeeper.Timeout = 4 * time.Second
	hg, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer hg.Close()
	go func() {
		for range hg.Errors() {
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(500*time.Millisecond, cancel)
	started := time.Now()
	err = hg.Consume(ctx, []string{topic}, &ledgerHandler{id: 1, l: newLedger()})
	t.Logf("Consume returned after %s: %v", time.Since(started).Round(time.Millisecond), err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Consume = %v, want the context's error: its end stops the wait for the id", err)
	}
}

// Close of a HandlerGroup whose Consume waits for a static id another
// live instance holds ends the wait: Consume returns
// sarama.ErrClosedConsumerGroup, and Close does not wait out the id.
func TestIntegrationStaticCloseEndsTheWaitForTheID(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	group := testenv.UniqueName("static-close")
	first := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
	done := consume(t, 0, first, newLedger())
	defer func() { closeGroup(t, first); <-done }()

	cfg := staticConfig("s0", 10*time.Second)
	cfg.Zookeeper.Timeout = 4 * time.Second
	hg, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range hg.Errors() {
		}
	}()
	time.AfterFunc(500*time.Millisecond, func() { _ = hg.Close() })
	started := time.Now()
	err = hg.Consume(t.Context(), []string{topic}, &ledgerHandler{id: 1, l: newLedger()})
	t.Logf("Consume returned after %s: %v", time.Since(started).Round(time.Millisecond), err)
	if !errors.Is(err, sarama.ErrClosedConsumerGroup) {
		t.Errorf("Consume = %v, want sarama.ErrClosedConsumerGroup: Close ends the wait for the id", err)
	}
}
