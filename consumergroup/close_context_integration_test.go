package consumergroup

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/internal/testenv"
)

// closeContextBound is a safety bound, not a speed claim: CloseContext
// with a 2 s context must return long before ProcessingTimeout (60 s).
const closeContextBound = 15 * time.Second

// slowDrainConfig is a config whose drains would wait a minute for marks.
func slowDrainConfig() *Config {
	cfg := fenceTestConfig()
	cfg.Offsets.ProcessingTimeout = time.Minute
	return cfg
}

// assertLeftGroup checks that no owner node of the topic's partitions and
// no registration of instance id is left in ZooKeeper.
func (f *orphanFixture) assertLeftGroup(partitions int32, id string) {
	f.t.Helper()
	for p := range partitions {
		if o := f.owner(p); o != "" {
			f.t.Errorf("partition %d still owned by %q", p, o)
		}
	}
	instances, err := f.kg.Instances()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, i := range instances {
		if i.ID == id {
			f.t.Errorf("instance %s is still registered", id)
		}
	}
}

// assertRedeliveredFrom joins a second instance and checks it owns every
// partition at once and gets each one's messages again from offset next
// (what the first instance did not commit).
func (f *orphanFixture) assertRedeliveredFrom(partitions int32, next int64) {
	f.t.Helper()
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, fenceTestConfig())
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = cg.Close() }()
	f.waitOwned(5*time.Second, partitions, "the next instance claims at once", cg)
	first := map[int32]int64{}
	timeout := time.After(20 * time.Second)
	for int32(len(first)) < partitions {
		select {
		case m := <-cg.Messages():
			if _, ok := first[m.Partition]; !ok {
				first[m.Partition] = m.Offset
			}
		case <-timeout:
			f.t.Fatalf("the next instance got the first messages of %v only", first)
		}
	}
	for p, o := range first {
		if o != next {
			f.t.Errorf("partition %d: the next instance starts at %d, want %d", p, o, next)
		}
	}
}

// A reader that takes every message and marks only the first of each
// partition: with ProcessingTimeout at a minute, CloseContext with a 2 s
// context stops waiting for the other marks, commits the first ones,
// and leaves the group (the owner nodes and the registration gone, so
// the next instance claims at once and gets the unmarked messages again),
// with an error saying the context ended, and no goroutine left.
func TestIntegrationCloseContextCutsTheDrainShort(t *testing.T) {
	const partitions = 2
	f := newOrphanFixture(t, partitions)
	before := goleak.IgnoreCurrent()
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, slowDrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	got := make(chan *sarama.ConsumerMessage, 16)
	readers.Add(2)
	go func() {
		defer readers.Done()
		for m := range cg.Messages() {
			if m.Offset == 0 {
				_ = cg.CommitUpto(m)
			}
			got <- m
		}
	}()
	go func() {
		defer readers.Done()
		for e := range cg.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	for n := 0; n < 3*partitions; n++ {
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d messages of %d", n, 3*partitions)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err = cg.CloseContext(ctx)
	took := time.Since(start)
	t.Logf("CloseContext took %v: %v", took, err)
	if took > closeContextBound {
		t.Errorf("CloseContext took %v, want < %v", took, closeContextBound)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CloseContext: %v, want an error matching context.DeadlineExceeded", err)
	}
	var cut *CloseCutShortError
	if !errors.As(err, &cut) || !slices.Contains(cut.CutShort, cutDrains) {
		t.Errorf("CloseContext: %v, want a *CloseCutShortError naming %q", err, cutDrains)
	}
	if err := cg.CloseContext(context.Background()); err != AlreadyClosing {
		t.Errorf("second CloseContext: %v, want AlreadyClosing", err)
	}
	if err := cg.Close(); err != AlreadyClosing {
		t.Errorf("Close after CloseContext: %v, want AlreadyClosing", err)
	}
	readers.Wait()
	goleak.VerifyNone(t, before)

	f.assertLeftGroup(partitions, cg.instance.ID)
	for p := range int32(partitions) {
		if o, err := f.kg.FetchOffset(f.topic, p); err != nil || o != 1 {
			t.Errorf("partition %d: stored offset %d (%v), want 1: the mark made before the cut", p, o, err)
		}
	}
	f.assertRedeliveredFrom(partitions, 1)
}

// A CloseContext whose context outlasts the close is Close: every mark is
// committed and it returns nil.
func TestIntegrationCloseContextCommitsMarks(t *testing.T) {
	const partitions = 2
	f := newOrphanFixture(t, partitions)
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, slowDrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 16)
	go func() {
		for m := range cg.Messages() {
			_ = cg.CommitUpto(m)
			got <- struct{}{}
		}
	}()
	go func() {
		for e := range cg.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	for n := 0; n < 3*partitions; n++ {
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d messages of %d", n, 3*partitions)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cg.CloseContext(ctx); err != nil {
		t.Fatalf("CloseContext: %v", err)
	}
	for p := range int32(partitions) {
		if o, err := f.kg.FetchOffset(f.topic, p); err != nil || o != 3 {
			t.Errorf("partition %d: stored offset %d (%v), want 3", p, o, err)
		}
	}
	f.assertLeftGroup(partitions, cg.instance.ID)
}

// stuckHandler reads its claims without marking; once a claim's channel
// closes, its ConsumeClaim waits for hold to close (a handler that does
// not return).
type stuckHandler struct {
	got  chan struct{}
	hold chan struct{}
}

func (stuckHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (stuckHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h stuckHandler) ConsumeClaim(_ sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for range c.Messages() {
		h.got <- struct{}{}
	}
	<-h.hold
	return nil
}

// HandlerGroup.CloseContext stops waiting for the drain and for handlers
// that do not return: the membership leaves the group within the bound
// (the next instance claims at once), the error says the context ended
// and that handlers still run; Consume returns, and Errors() closes, once
// they do.
func TestIntegrationHandlerGroupCloseContextStopsWaitingForHandlers(t *testing.T) {
	const partitions = 2
	f := newOrphanFixture(t, partitions)
	before := goleak.IgnoreCurrent()
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
	id := g.group().instance.ID

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err = g.CloseContext(ctx)
	took := time.Since(start)
	t.Logf("CloseContext took %v: %v", took, err)
	if took > closeContextBound {
		t.Errorf("CloseContext took %v, want < %v", took, closeContextBound)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CloseContext: %v, want an error matching context.DeadlineExceeded", err)
	}
	if err == nil || !strings.Contains(err.Error(), cutHandlers) {
		t.Errorf("CloseContext: %v, want it to say %q", err, cutHandlers)
	}
	f.assertLeftGroup(partitions, id)
	f.assertRedeliveredFrom(partitions, 0)

	close(h.hold)
	select {
	case err := <-consumed:
		t.Logf("Consume returned: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Consume did not return once the handlers did")
	}
	goleak.VerifyNone(t, before)
	if err := g.Close(); err != AlreadyClosing {
		t.Errorf("Close after CloseContext: %v, want AlreadyClosing", err)
	}
}

// setupHandler's Setup waits for hold to close (a Setup that hangs).
type setupHandler struct {
	inSetup chan struct{}
	hold    chan struct{}
}

func (h setupHandler) Setup(sarama.ConsumerGroupSession) error {
	close(h.inSetup)
	<-h.hold
	return nil
}
func (setupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (setupHandler) ConsumeClaim(sarama.ConsumerGroupSession, sarama.ConsumerGroupClaim) error {
	return nil
}

// A Setup that hangs holds the session up, not CloseContext: once its
// context ends the member leaves the group (the partitions it claimed
// meanwhile are released), and Consume returns once Setup does.
func TestIntegrationHandlerGroupCloseContextLeavesDuringSetup(t *testing.T) {
	const partitions = 2
	f := newOrphanFixture(t, partitions)
	g, err := NewConsumerGroup(f.group, []string{testenv.ZKAddr()}, slowDrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	h := setupHandler{inSetup: make(chan struct{}), hold: make(chan struct{})}
	consumed := make(chan error, 1)
	go func() { consumed <- g.Consume(context.Background(), []string{f.topic}, h) }()
	go func() {
		for e := range g.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	select {
	case <-h.inSetup:
	case <-time.After(30 * time.Second):
		t.Fatal("Setup did not run")
	}
	cg := g.group()
	f.waitOwned(20*time.Second, partitions, "claimed while Setup runs", cg)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err = g.CloseContext(ctx)
	took := time.Since(start)
	t.Logf("CloseContext took %v: %v", took, err)
	if took > closeContextBound {
		t.Errorf("CloseContext took %v, want < %v", took, closeContextBound)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), cutHandlers) {
		t.Errorf("CloseContext: %v, want an error matching context.DeadlineExceeded and saying %q", err, cutHandlers)
	}
	f.assertLeftGroup(partitions, cg.instance.ID)

	close(h.hold)
	select {
	case err := <-consumed:
		t.Logf("Consume returned: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Consume did not return once Setup did")
	}
	if _, ok := <-g.Errors(); ok {
		for range g.Errors() {
		}
	}
}
