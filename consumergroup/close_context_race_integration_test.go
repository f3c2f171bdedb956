package consumergroup

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/internal/worker"
)

// A SIGTERM handler's CloseContext must keep its bound when another
// goroutine's Close is already under way (a deferred Close, an error
// path): its context ending hurries that close as it would its own,
// rather than waiting out Close's ProcessingTimeout (a minute here).
func TestIntegrationCloseContextHurriesACloseUnderWay(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, slowDrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	t.Cleanup(func() { <-closed })
	go func() {
		for e := range cg.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	for n := 0; n < 3; n++ { // taken, never marked: the drain waits a minute
		select {
		case <-cg.Messages():
		case <-time.After(30 * time.Second):
			t.Fatalf("%d messages of 3", n)
		}
	}
	go func() {
		for range cg.Messages() {
		}
	}()
	go func() { closed <- cg.Close() }()
	for !isClosed(cg.stopper) {
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cg.CloseContext(ctx) }()
	select {
	case err := <-done:
		t.Logf("CloseContext during Close took %v: %v", time.Since(start), err)
		if err != AlreadyClosing {
			t.Errorf("CloseContext during Close: %v, want AlreadyClosing", err)
		}
	case <-time.After(closeContextBound):
		t.Errorf("CloseContext with a 1 s context, called while Close runs, has not returned after %v: "+
			"it waits for Close's drain (ProcessingTimeout %v)", closeContextBound, slowDrainConfig().Offsets.ProcessingTimeout)
	}
}

// The same for a HandlerGroup: a Close under way waits for handlers that
// do not return; a CloseContext called meanwhile still returns once the
// membership has left the group after its context ended.
func TestIntegrationHandlerGroupCloseContextHurriesACloseUnderWay(t *testing.T) {
	const partitions = 1
	f := newOrphanFixture(t, partitions)
	g, err := NewConsumerGroup(f.group, []string{testenv.ZKAddr()}, slowDrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	h := stuckHandler{got: make(chan struct{}, 16), hold: make(chan struct{})}
	consumed := make(chan error, 1)
	go func() { consumed <- g.Consume(context.Background(), []string{f.topic}, h) }()
	go func() {
		for e := range g.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	for n := 0; n < 3*partitions; n++ {
		select {
		case <-h.got:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d messages of %d", n, 3*partitions)
		}
	}
	closed := make(chan error, 1)
	t.Cleanup(func() {
		close(h.hold)
		<-consumed
		<-closed
	})
	go func() { closed <- g.Close() }()
	for !g.isClosing() {
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- g.CloseContext(ctx) }()
	select {
	case err := <-done:
		t.Logf("CloseContext during Close took %v: %v", time.Since(start), err)
		if err != AlreadyClosing {
			t.Errorf("CloseContext during Close: %v, want AlreadyClosing", err)
		}
	case <-time.After(closeContextBound):
		t.Fatalf("CloseContext with a 1 s context, called while Close runs, has not returned after %v: "+
			"it waits for Close, which waits for the handlers", closeContextBound)
	}
	f.assertLeftGroup(partitions, "")
}

// A context that ends once every drain is over (every message marked, the
// final commit made, the release under way) cut no drain short: the
// error must not say that messages were left unmarked.
func TestIntegrationCloseContextNamesNoDrainWhenNoneWasCut(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cfg := slowDrainConfig()
	x := f.join(cfg) // marks every message at once
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if o, err := f.kg.FetchOffset(f.topic, 0); err == nil && o == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the three messages were not committed")
		}
	}
	releasing, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func(cg *ConsumerGroup, _ *worker.Worker) {
		if cg == x {
			once.Do(func() { close(releasing) })
			<-proceed
		}
	}
	testHooks.beforeRelease.Store(&hook)
	t.Cleanup(func() { testHooks.beforeRelease.Store(nil) })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.CloseContext(ctx) }()
	select {
	case <-releasing:
	case <-time.After(10 * time.Second):
		close(proceed)
		t.Fatal("the partition was never released")
	}
	cancel() // every drain is over: the worker is releasing
	time.Sleep(100 * time.Millisecond)
	close(proceed)
	err := <-done
	t.Logf("CloseContext: %v", err)
	var cut *CloseCutShortError
	if !errors.As(err, &cut) {
		t.Fatalf("CloseContext: %v, want a *CloseCutShortError", err)
	}
	if slices.Contains(cut.CutShort, cutDrains) {
		t.Errorf("CloseContext: %v; no drain was waiting for marks when its context ended", err)
	}
}
