package consumergroup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// The error of a close cut short says the context ended, matches the
// context's error and its cause with errors.Is, and names what was cut
// short.
func TestCloseCutShortErrorSaysTheContextEnded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	err := error(newCloseCutShortError(ctx, []string{cutDrains, cutSession}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not match context.DeadlineExceeded", err)
	}
	var cut *CloseCutShortError
	if !errors.As(err, &cut) || len(cut.CutShort) != 2 {
		t.Fatalf("%v: not a *CloseCutShortError naming two steps", err)
	}
	for _, want := range []string{"context deadline exceeded", cutDrains, cutSession} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}

	why := errors.New("SIGTERM")
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(why)
	err = newCloseCutShortError(ctx, nil)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, why) {
		t.Errorf("%v matches neither context.Canceled nor its cause", err)
	}
}

// A HandlerGroup with no Consume running closes at once whatever its
// context: Errors() is closed, later calls return AlreadyClosing and
// Consume returns sarama.ErrClosedConsumerGroup.
func TestHandlerGroupCloseContextWithoutConsume(t *testing.T) {
	g, err := NewConsumerGroup("g", []string{"192.0.2.1:2181"}, nil) // TEST-NET-1: never dialled
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // ended already: there is nothing to cut short
	if err := g.CloseContext(ctx); err != nil {
		t.Fatalf("CloseContext: %v", err)
	}
	if _, ok := <-g.Errors(); ok {
		t.Error("Errors() is open after CloseContext")
	}
	if err := g.CloseContext(context.Background()); err != AlreadyClosing {
		t.Errorf("second CloseContext: %v, want AlreadyClosing", err)
	}
	if err := g.Close(); err != AlreadyClosing {
		t.Errorf("Close after CloseContext: %v, want AlreadyClosing", err)
	}
	if err := g.Consume(context.Background(), []string{"t"}, nil); err == nil {
		t.Error("Consume without a handler after close: no error")
	}
	if err := g.Consume(context.Background(), []string{"t"}, noHandler{}); err != sarama.ErrClosedConsumerGroup {
		t.Errorf("Consume after close: %v, want sarama.ErrClosedConsumerGroup", err)
	}
}

type noHandler struct{}

func (noHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (noHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (noHandler) ConsumeClaim(sarama.ConsumerGroupSession, sarama.ConsumerGroupClaim) error {
	return nil
}

// A CloseContext whose context ends while Consume is still joining cuts
// nothing short: no membership, drain or handler ran. Its error says the
// context ended and names nothing (it named the drain, and at times the
// handlers, which never existed).
func TestHandlerGroupCloseContextWhileJoiningCutsNothingShort(t *testing.T) {
	cfg := NewConfig()
	cfg.Zookeeper.ConnectTimeout = 500 * time.Millisecond
	g, err := NewConsumerGroup("g", []string{"192.0.2.1:2181"}, cfg) // TEST-NET-1: the join fails
	if err != nil {
		t.Fatal(err)
	}
	consumed := make(chan error, 1)
	go func() { consumed <- g.Consume(context.Background(), []string{"t"}, noHandler{}) }()
	for joining := false; !joining; time.Sleep(time.Millisecond) {
		g.curMu.Lock()
		joining = g.session != nil
		g.curMu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = g.CloseContext(ctx)
	var cut *CloseCutShortError
	if !errors.As(err, &cut) || !errors.Is(err, context.Canceled) {
		t.Fatalf("CloseContext: %v, want a *CloseCutShortError matching context.Canceled", err)
	}
	if len(cut.CutShort) != 0 {
		t.Errorf("CloseContext while joining: %v; want nothing named as cut short", err)
	}
	if err := <-consumed; err == nil {
		t.Error("Consume joined a group at TEST-NET-1")
	}
}
